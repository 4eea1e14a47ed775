package io.strata.core.testing;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import com.google.rpc.Code;
import io.grpc.MethodDescriptor;
import io.strata.proto.v1.BatchCall;
import io.strata.proto.v1.BatchRequest;
import io.strata.proto.v1.Block;
import io.strata.proto.v1.FileStatus;
import io.strata.proto.v1.FileType;
import io.strata.proto.v1.Header;
import io.strata.proto.v1.ListWorkersResponse;
import io.strata.proto.v1.MetaServiceGrpc;
import io.strata.proto.v1.OpenResponse;
import io.strata.proto.v1.ReadRequest;
import io.strata.proto.v1.WorkerInfo;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The fake members of one client script (internal/client/testdata/scripts; the language: its
 * README), and the log of what they received: the member lines of a script ("m1 follows m2", "m1
 * drops Mkdirs /a once", "m1 got Mkdirs /a rid=R1"...) carried out on {@link FakeMember}s, as
 * internal/client/clienttest's Group carries them out on Go's. Safe for concurrent use.
 */
public final class ScriptedMembers implements AutoCloseable {
  /** How long a script's wait may last: a bound for a broken test, not a synchronisation. */
  public static final long BOUND_NANOS = TimeUnit.SECONDS.toNanos(30);

  /** A rule: what a member does with the calls of one method on one path. */
  private record Rule(String method, String path, String action, String answer, boolean once) {}

  /** One request received, by the member named. */
  private record Entry(String member, FakeMember.Received r) {}

  /** A call as a "got" line names it (rid: a name), or as a member received it (rid: hex). */
  private record Call(String method, String path, String rid, boolean first) {
    @Override
    public String toString() {
      return (method + " " + path).strip() + (rid.isEmpty() ? "" : " rid=" + rid)
          + (first ? " first=true" : "");
    }
  }

  private final Object mu = new Object();
  // Guarded by mu.
  private final Map<String, FakeMember> members = new LinkedHashMap<>();
  private final Map<String, FakeWorker> workers = new LinkedHashMap<>(); // as members list them
  private final Map<String, Map<String, OpenResponse>> files = new HashMap<>(); // Open's answers
  private final Map<String, List<Rule>> rules = new HashMap<>();
  private final Map<String, CountDownLatch> holds = new HashMap<>();
  private final Map<String, Set<String>> answered = new HashMap<>(); // methods with a function
  private final List<Entry> log = new ArrayList<>();
  private int checked;
  private final Map<String, ByteString> rids = new HashMap<>();

  /** Starts the members named, each leading. */
  public void start(List<String> names) throws IOException {
    for (String n : names) {
      FakeMember m = FakeMember.start();
      m.onReceive(r -> received(n, r));
      synchronized (mu) {
        members.put(n, m);
        holds.put(n, new CountDownLatch(0));
      }
      m.answer("ListWorkers", req -> ListWorkersResponse.newBuilder().addAllWorkers(
          workerInfos()).build());
    }
  }

  /** Starts the workers named: the members list them, in this order, as the live workers. */
  public void startWorkers(List<String> names) throws IOException {
    for (String n : names) {
      FakeWorker w = FakeWorker.start(n, req -> received(n, new FakeMember.Received("Read", req)));
      synchronized (mu) {
        workers.put(n, w);
      }
    }
  }

  private List<WorkerInfo> workerInfos() {
    synchronized (mu) {
      return workers.values().stream().map(FakeWorker::info).toList();
    }
  }

  /** The member named, or null. */
  public FakeMember member(String name) {
    synchronized (mu) {
      return members.get(name);
    }
  }

  /**
   * Logs a request. NB: but for ListWorkers: when a client asks for the list of workers is its
   * own business (the Go reader also asks in the background).
   */
  private void received(String member, FakeMember.Received r) {
    if (r.method().equals("ListWorkers")) {
      return;
    }
    synchronized (mu) {
      log.add(new Entry(member, r));
      mu.notifyAll();
    }
  }

  /** Fails if members received requests that no "got" line matched. */
  public void unchecked() {
    synchronized (mu) {
      if (checked < log.size()) {
        throw new AssertionError("requests no line expected: " + String.join("; ",
            log.subList(checked, log.size()).stream().map(ScriptedMembers::describe).toList()));
      }
    }
  }

  /** Carries out a member's line; {@code w.get(0)} names the member. */
  public void run(List<String> w) throws IOException, InterruptedException {
    FakeWorker worker;
    synchronized (mu) {
      worker = workers.get(w.get(0));
    }
    if (worker != null && w.size() >= 2) {
      switch (w.get(1)) {
        case "refuses" -> worker.refuse();
        case "up" -> worker.up();
        case "got" -> got(w.get(0), String.join(" ", w.subList(2, w.size())));
        default -> throw new IllegalArgumentException("unknown verb " + w.get(1)
            + " for a worker");
      }
      return;
    }
    FakeMember m = member(w.get(0));
    if (m == null || w.size() < 2) {
      throw new IllegalArgumentException("no member " + w.get(0));
    }
    List<String> args = w.subList(2, w.size());
    switch (w.get(1)) {
      case "leads" -> m.lead();
      case "has" -> has(w.get(0), args);
      case "follows" -> follows(m, args);
      case "answers", "drops", "holds" -> addRule(w.get(0), w.get(1), args);
      case "releases" -> release(w.get(0));
      case "refuses" -> m.refuse();
      case "down" -> m.down();
      case "up" -> m.up();
      case "tried" -> m.awaitTried(Integer.parseInt(String.join("", args)));
      case "got" -> got(w.get(0), String.join(" ", args));
      default -> throw new IllegalArgumentException("unknown verb " + w.get(1));
    }
  }

  /** "has PATH inode N blocks K": an Open of PATH answers a file of K blocks of 1024 bytes. */
  private void has(String member, List<String> args) {
    if (args.size() != 5 || !args.get(1).equals("inode") || !args.get(3).equals("blocks")) {
      throw new IllegalArgumentException("has: want PATH inode N blocks K: " + args);
    }
    String path = args.get(0);
    int blocks = Integer.parseInt(args.get(4));
    // NB: with a block token an hour from its expiry, as the service always grants one: the
    // clients differ on a missing one (this one asks again at every block, Go's never).
    OpenResponse.Builder r = OpenResponse.newBuilder().setStoreUri("mem://fake")
        .setBlockToken(ByteString.copyFromUtf8("fake-block-token"))
        .setBlockTokenExpires(System.currentTimeMillis() + TimeUnit.HOURS.toMillis(1))
        .setStatus(FileStatus.newBuilder().setName(path.substring(path.lastIndexOf('/') + 1))
            .setInodeId(Long.parseUnsignedLong(args.get(2))).setType(FileType.FILE_TYPE_FILE)
            .setLength(blocks * FILE_BLOCK).setBlockSize(FILE_BLOCK));
    for (int i = 0; i < blocks; i++) {
      r.addBlocks(Block.newBuilder().setBlockId(i).setOffset(i * FILE_BLOCK)
          .setLength(FILE_BLOCK));
    }
    boolean install;
    synchronized (mu) {
      files.computeIfAbsent(member, k -> new HashMap<>()).put(path, r.build());
      install = answered.computeIfAbsent(member, k -> new HashSet<>()).add("Open");
    }
    if (install) {
      member(member).answer("Open", req -> apply(member, "Open", req));
    }
  }

  /** The size of a scripted file's blocks, as Go's clienttest has it. */
  private static final long FILE_BLOCK = 1024;

  private void follows(FakeMember m, List<String> args) {
    FakeMember leader = args.size() == 1 ? member(args.get(0)) : null;
    if (leader == null && !args.equals(List.of("nobody"))) {
      throw new IllegalArgumentException("follows: want a member's name or nobody: " + args);
    }
    m.follow(leader == null ? null : leader.address());
  }

  private void release(String member) {
    synchronized (mu) {
      holds.get(member).countDown();
    }
  }

  /** "answers METHOD PATH ANSWER [once]", "drops METHOD PATH [once]", "holds METHOD PATH". */
  private void addRule(String member, String verb, List<String> a) {
    String action = verb.substring(0, verb.length() - 1);
    List<String> args = new ArrayList<>(a);
    String answer = "";
    if (action.equals("answer") && args.size() >= 3) {
      answer = args.remove(2);
      if (!Set.of("NOT_FOUND", "ALREADY_EXISTS", "NOT_LEADER").contains(answer)) {
        throw new IllegalArgumentException("answers: unknown answer " + answer);
      }
    }
    boolean once = args.size() == 3 && args.get(2).equals("once") && !action.equals("hold");
    if (once) {
      args.remove(2);
    }
    if (args.size() != 2 || (action.equals("answer") && answer.isEmpty())) {
      throw new IllegalArgumentException(verb + ": want METHOD PATH: " + a);
    }
    String method = args.get(0);
    boolean install;
    synchronized (mu) {
      rules.computeIfAbsent(member, k -> new ArrayList<>())
          .add(new Rule(method, args.get(1), action, answer, once));
      if (action.equals("hold") && holds.get(member).getCount() == 0) {
        holds.put(member, new CountDownLatch(1));
      }
      install = answered.computeIfAbsent(member, k -> new HashSet<>()).add(method);
    }
    // NB: outside mu: the member tells received() of a request in its own lock.
    if (install) {
      member(member).answer(method, req -> apply(member, method, req));
    }
  }

  /** What the member's first rule for the call says: an answer, DROP, or (after a hold) none. */
  private Object apply(String member, String method, Message req) {
    Rule rule = null;
    CountDownLatch hold;
    synchronized (mu) {
      List<Rule> rs = rules.getOrDefault(member, List.of());
      for (int i = 0; i < rs.size() && rule == null; i++) {
        Rule r = rs.get(i);
        if (r.method().equals(method) && r.path().equals(pathOf(req))) {
          rule = r.once() ? rs.remove(i) : r;
        }
      }
      hold = holds.get(member);
    }
    String op = method.toLowerCase(java.util.Locale.ROOT) + " " + pathOf(req);
    return switch (rule == null ? "" : rule.action() + rule.answer()) {
      case "drop" -> FakeMember.DROP;
      case "hold" -> held(hold, member, method, req);
      case "answerNOT_FOUND" -> FakeMember.strataStatus(Code.NOT_FOUND, "NOT_FOUND",
          op + ": no such file or directory", Map.of());
      case "answerALREADY_EXISTS" -> FakeMember.strataStatus(Code.ALREADY_EXISTS,
          "ALREADY_EXISTS", op + ": file exists", Map.of());
      case "answerNOT_LEADER" -> FakeMember.notLeader("");
      default -> answerOf(member, method, req);
    };
  }

  private Object held(CountDownLatch hold, String member, String method, Message req) {
    try {
      if (!hold.await(BOUND_NANOS, TimeUnit.NANOSECONDS)) {
        throw new AssertionError("a call of " + method + " held for longer than the bound");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return answerOf(member, method, req);
  }

  /** What a leader answers: a scripted file's blocks, or the response's default. */
  private Object answerOf(String member, String method, Message req) {
    synchronized (mu) {
      OpenResponse f = files.getOrDefault(member, Map.of()).get(pathOf(req));
      if (method.equals("Open") && f != null) {
        return f;
      }
    }
    return defaultAnswer(method);
  }

  /** The default instance of {@code method}'s response: what a leader answers. */
  private static Object defaultAnswer(String method) {
    for (MethodDescriptor<?, ?> md : MetaServiceGrpc.getServiceDescriptor().getMethods()) {
      if (md.getBareMethodName().equals(method)
          && md.getResponseMarshaller() instanceof MethodDescriptor.PrototypeMarshaller<?> pm) {
        return pm.getMessagePrototype();
      }
    }
    throw new IllegalArgumentException("no method " + method);
  }

  /** The path a request names: its path, or a rename's source. */
  private static String pathOf(Message req) {
    if (req instanceof ReadRequest r) {
      return Long.toUnsignedString(r.getBlock().getInodeId()) + "/"
          + Long.toUnsignedString(r.getBlock().getBlockId());
    }
    for (String name : List.of("path", "src")) {
      FieldDescriptor f = req.getDescriptorForType().findFieldByName(name);
      if (f != null && f.getType() == FieldDescriptor.Type.STRING) {
        return (String) req.getField(f);
      }
    }
    return "";
  }

  /**
   * Matches the next request received, waiting for it, with "METHOD PATH [rid=NAME]
   * [first=true]" or "Batch: CALL, CALL...", as a request of {@code member}.
   */
  private void got(String member, String line) throws InterruptedException {
    boolean batch = line.startsWith("Batch:");
    List<Call> want = new ArrayList<>();
    for (String part : (batch ? line.substring("Batch:".length()) : line).split(",")) {
      want.add(parseCall(part.strip()));
    }
    String expected = member + " got " + (batch ? "Batch: " : "") + String.join(", ",
        want.stream().map(Call::toString).toList());
    Entry e = next(expected);
    List<Call> have = callsOf(e.r());
    boolean isBatch = e.r().method().equals("Batch");
    if (!e.member().equals(member) || batch != isBatch || have.size() != want.size()) {
      throw new AssertionError("want " + expected + ", got " + describe(e));
    }
    want.sort(Comparator.comparing(Call::path));
    have.sort(Comparator.comparing(Call::path));
    for (int i = 0; i < have.size(); i++) {
      Call h = have.get(i);
      Call w = want.get(i);
      String id = sameId(w.rid(), h.rid());
      if (!h.method().equals(w.method()) || !h.path().equals(w.path()) || h.first() != w.first()
          || id != null) {
        throw new AssertionError("want " + expected + ", got " + describe(e) + ": " + h
            + " is not " + w + (id == null ? "" : ": " + id));
      }
    }
  }

  private static Call parseCall(String s) {
    String[] f = s.split("\\s+");
    if (f.length < 1 || f[0].isEmpty()) {
      throw new IllegalArgumentException("got: want METHOD [PATH] [rid=NAME] [first=true]: " + s);
    }
    String rid = "";
    boolean first = false;
    int opts = f.length > 1 && !f[1].contains("=") ? 2 : 1; // a request without a path has none
    String path = opts == 2 ? f[1] : "";
    for (int i = opts; i < f.length; i++) {
      if (f[i].startsWith("rid=") && f[i].length() > 4) {
        rid = f[i].substring(4);
      } else if (f[i].equals("first=true")) {
        first = true;
      } else {
        throw new IllegalArgumentException("got: unknown " + f[i]);
      }
    }
    return new Call(f[0], path, rid, first);
  }

  /** The next entry of the log no line matched, waiting for it. */
  private Entry next(String expected) throws InterruptedException {
    long until = System.nanoTime() + BOUND_NANOS;
    synchronized (mu) {
      while (checked == log.size()) {
        long left = until - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError(expected + ": no request came within the bound");
        }
        TimeUnit.NANOSECONDS.timedWait(mu, left);
      }
      return log.get(checked++);
    }
  }

  /**
   * Checks a request id (hex; empty: none) against the one a script names (empty: none): the
   * same as before under that name, and not another name's. Returns why not, or null.
   */
  private String sameId(String name, String hex) {
    if (name.isEmpty() || hex.isEmpty()) {
      return name.isEmpty() && hex.isEmpty() ? null
          : "request id \"" + hex + "\", want \"" + name + "\"";
    }
    ByteString id = ByteString.copyFromUtf8(hex);
    synchronized (mu) {
      ByteString bound = rids.get(name);
      if (bound != null) {
        return bound.equals(id) ? null
            : "request id " + hex + ", not " + name + "'s (" + bound.toStringUtf8() + ")";
      }
      for (Map.Entry<String, ByteString> en : rids.entrySet()) {
        if (en.getValue().equals(id)) {
          return "request id " + hex + " is " + en.getKey() + "'s, not a new one";
        }
      }
      rids.put(name, id);
      return null;
    }
  }

  /** The calls of a request: itself, or a Batch's. */
  private static List<Call> callsOf(FakeMember.Received r) {
    List<Call> out = new ArrayList<>();
    if (r.request() instanceof BatchRequest b) {
      for (BatchCall c : b.getCallsList()) {
        FieldDescriptor f = c.getOneofFieldDescriptor(BatchCall.getDescriptor().getOneofs()
            .get(0));
        Message req = (Message) c.getField(f);
        out.add(callOf(req.getDescriptorForType().getName().replaceFirst("Request$", ""), req));
      }
    } else {
      out.add(callOf(r.method(), r.request()));
    }
    return out;
  }

  private static Call callOf(String method, Message req) {
    FieldDescriptor f = req.getDescriptorForType().findFieldByName("header");
    Header h = f == null ? Header.getDefaultInstance() : (Header) req.getField(f);
    String rid = h.getRequestId().isEmpty() ? ""
        : HexFormat.of().formatHex(h.getRequestId().toByteArray());
    return new Call(method, pathOf(req), rid, h.getFirstAttempt());
  }

  private static String describe(Entry e) {
    boolean batch = e.r().method().equals("Batch");
    return e.member() + " got " + (batch ? "Batch: " : "") + String.join(", ",
        callsOf(e.r()).stream().map(Call::toString).toList());
  }

  /** Releases the calls held and stops every member. */
  @Override
  public void close() {
    List<FakeMember> ms;
    synchronized (mu) {
      holds.values().forEach(CountDownLatch::countDown);
      ms = List.copyOf(members.values());
    }
    ms.forEach(FakeMember::close);
    List<FakeWorker> ws;
    synchronized (mu) {
      ws = List.copyOf(workers.values());
    }
    ws.forEach(FakeWorker::close);
  }
}
