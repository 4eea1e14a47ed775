package io.strata.hadoop;

import static org.junit.Assert.assertEquals;

import io.strata.core.ClientConfig;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.junit.Test;

/** The Hadoop keys of calls in flight reach the client: reads and mutations each their own. */
public class TestClientSettings {
  private static final URI NAME = URI.create("strata://default/");

  private static Configuration conf() {
    Configuration conf = new Configuration(false);
    conf.set(StrataConfigKeys.META_ADDRESS, "127.0.0.1:7700");
    conf.set(StrataConfigKeys.USER, "alice");
    return conf;
  }

  @Test
  public void callsInFlightDefaultToTwoReadsAndOneMutation() throws Exception {
    ClientConfig c = ClientSettings.of(conf(), NAME);
    assertEquals(2, c.batchesInFlight());
    assertEquals(1, c.mutationsInFlight());
  }

  @Test
  public void readsAndMutationsInFlightAreSetApart() throws Exception {
    Configuration conf = conf();
    conf.setInt(StrataConfigKeys.META_BATCHES_IN_FLIGHT, 5);
    conf.setInt(StrataConfigKeys.META_MUTATIONS_IN_FLIGHT, 0);
    ClientConfig c = ClientSettings.of(conf, NAME);
    assertEquals(5, c.batchesInFlight());
    assertEquals(0, c.mutationsInFlight());
  }
}
