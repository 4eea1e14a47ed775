package io.strata.core.rpc;

/**
 * One {@code host:port} address of the namespace service ({@code [v6addr]:port} for IPv6).
 *
 * @param host host name or address
 * @param port TCP port
 */
public record HostPort(String host, int port) {
  /**
   * Parses {@code host:port}.
   *
   * @throws IllegalArgumentException when it is not one
   */
  public static HostPort parse(String s) {
    String t = s.trim();
    int colon = t.lastIndexOf(':');
    if (colon <= 0 || colon == t.length() - 1) {
      throw new IllegalArgumentException("not host:port: \"" + s + "\"");
    }
    String host = t.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(t.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not host:port: \"" + s + "\"", e);
    }
    if (port <= 0 || port > 65535) {
      throw new IllegalArgumentException("port out of range in \"" + s + "\"");
    }
    return new HostPort(host, port);
  }

  @Override
  public String toString() {
    return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
  }
}
