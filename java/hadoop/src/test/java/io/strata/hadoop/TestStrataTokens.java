package io.strata.hadoop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.security.PrivilegedExceptionAction;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.junit.Test;

/**
 * The Hadoop client and tokens (docs/security.md): the token, not the Hadoop user, says who the
 * client is; getDelegationToken hands the token to a job, whose tasks find it in their
 * credentials; Hadoop's renewer renews and cancels it.
 */
public class TestStrataTokens extends StrataTestBase {
  private Configuration as(String token) {
    Configuration conf = new Configuration();
    conf.set(StrataConfigKeys.META_ADDRESS, SERVER.address());
    if (token != null) {
      conf.set(StrataConfigKeys.TOKEN, token);
    }
    return conf;
  }

  @Test
  public void theHadoopUserDoesNotChooseTheIdentity() throws Exception {
    Path priv = new Path(base, "private");
    fs.mkdirs(priv, new FsPermission((short) 0700));
    fs.setPermission(priv, new FsPermission((short) 0700));
    Configuration conf = as(SERVER.cluster().token("alice"));
    conf.set(StrataConfigKeys.USER, System.getProperty("user.name"));
    conf.set(StrataConfigKeys.GROUPS, "supergroup");
    UserGroupInformation root = UserGroupInformation.createRemoteUser(System.getProperty("user.name"));
    root.doAs((PrivilegedExceptionAction<Void>) () -> {
      try (FileSystem alice = newFs("strata://default/", conf)) {
        assertEquals("/user/alice", alice.getHomeDirectory().toUri().getPath());
        assertThrows(AccessControlException.class, () -> alice.mkdirs(new Path(priv, "x")));
        assertThrows(AccessControlException.class, () -> alice.listStatus(priv));
      }
      return null;
    });
  }

  @Test
  public void aJobsTasksCarryTheToken() throws Exception {
    String tok = SERVER.cluster().token("bob", "staff");
    fs.setPermission(base, new FsPermission((short) 0777));
    Token<?> dt;
    try (FileSystem bob = newFs("strata://default/", as(tok))) {
      assertEquals("strata:" + SERVER.address(), bob.getCanonicalServiceName());
      dt = bob.getDelegationToken("yarn");
      assertNotNull(dt);
      assertEquals(StrataTokenIdentifier.KIND, dt.getKind());
      assertEquals(bob.getCanonicalServiceName(), dt.getService().toString());
      StrataTokenIdentifier id = (StrataTokenIdentifier) dt.decodeIdentifier();
      assertEquals("bob", id.getUser().getUserName());
      Credentials creds = new Credentials();
      Token<?>[] added = bob.addDelegationTokens("yarn", creds);
      assertEquals(1, added.length);
    }
    // A task: the token in its credentials, nothing in its configuration.
    UserGroupInformation task = UserGroupInformation.createRemoteUser("yarn");
    task.addToken(dt);
    String home = task.doAs((PrivilegedExceptionAction<String>) () -> {
      Configuration conf = as(null);
      conf.set(StrataConfigKeys.TOKEN_FILE, "/nonexistent/only/if/the/credentials/were/ignored");
      try (FileSystem fs = newFs("strata://default/", conf)) {
        fs.mkdirs(new Path(base, "from-task"));
        return fs.getHomeDirectory().toUri().getPath() + " "
            + fs.getFileStatus(new Path(base, "from-task")).getOwner();
      }
    });
    assertEquals("/user/bob bob", home);
  }

  @Test
  public void hadoopRenewsAndCancelsTheToken() throws Exception {
    String tok = SERVER.cluster().token("carol");
    Token<?> dt;
    try (FileSystem carol = newFs("strata://default/", as(tok))) {
      dt = carol.getDelegationToken("yarn");
    }
    Configuration conf = new Configuration();
    long expiry = dt.renew(conf);
    assertTrue("renewed until " + expiry, expiry > System.currentTimeMillis());
    dt.cancel(conf);
    try (FileSystem carol = newFs("strata://default/", as(tok))) {
      assertThrows(AccessControlException.class, () -> carol.getFileStatus(new Path("/")));
    }
  }
}
