package io.strata.hadoop;

import io.strata.proto.v1.TokenIdentifier;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.io.InputStream;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * The identifier of a Strata token as Hadoop's token framework sees it (kind {@link #KIND},
 * registered in META-INF/services so that {@code Token.decodeIdentifier} finds it). Its bytes
 * are the Strata identifier's exactly as the service signed them (docs/security.md): {@link
 * #write} writes them as they are, and {@link #readFields} reads them to the end of the input.
 */
public class StrataTokenIdentifier extends org.apache.hadoop.security.token.TokenIdentifier {
  /** The kind of Strata tokens in Hadoop credentials. */
  public static final Text KIND = new Text("STRATA_TOKEN");

  private byte[] bytes = new byte[0];
  private TokenIdentifier id = TokenIdentifier.getDefaultInstance();

  /** For the service loader and Writable deserialization. */
  public StrataTokenIdentifier() {}

  StrataTokenIdentifier(byte[] bytes) throws IOException {
    set(bytes);
  }

  private void set(byte[] b) throws IOException {
    bytes = b.clone();
    id = TokenIdentifier.parseFrom(b);
  }

  @Override
  public Text getKind() {
    return KIND;
  }

  @Override
  public UserGroupInformation getUser() {
    return id.getUser().isEmpty() ? null : UserGroupInformation.createRemoteUser(id.getUser());
  }

  /** The Strata identifier: id, user, groups, expiry. */
  public TokenIdentifier identifier() {
    return id;
  }

  @Override
  public void write(DataOutput out) throws IOException {
    out.write(bytes);
  }

  /**
   * Reads the identifier: the rest of {@code in}, which Hadoop hands over as a stream of the
   * identifier's bytes alone ({@code Token.decodeIdentifier}).
   */
  @Override
  public void readFields(DataInput in) throws IOException {
    if (!(in instanceof InputStream)) {
      throw new IOException("a Strata token identifier reads from a stream of its bytes only");
    }
    set(((InputStream) in).readAllBytes());
  }

  @Override
  public String toString() {
    return "Strata token " + id.getId() + " of " + id.getUser();
  }
}
