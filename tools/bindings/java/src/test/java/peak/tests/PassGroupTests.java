package peak.tests;

import peak.GenerateOptions;
import peak.Model;
import peak.PassGroup;
import peak.PassGroupParams;
import peak.SamplerParams;
import peak.Session;
import peak.SessionParams;

/** Sessions in one pass group: each answers as alone, in passes that took both. */
public final class PassGroupTests {
  private static final String[] MESSAGES = {
      "Lily saw a big red ball in the park.", "Tom had a little dog named Max. One day"};

  private static SessionParams params() {
    return new SessionParams().chatTemplate("chatml").nThreads(1).sampler(SamplerParams.greedy());
  }

  private static String answer(Session session, String message) {
    StringBuilder text = new StringBuilder();
    session.chat(message, new GenerateOptions().maxTokens(48), text::append);
    return text.toString();
  }

  @Test
  public void twoSessionsOnTwoThreadsAnswerAsAloneInSharedPasses() throws Exception {
    try (Model model = Model.load(Fixtures.stories())) {
      String[] alone = new String[MESSAGES.length];
      for (int i = 0; i < MESSAGES.length; ++i) {
        try (Session session = new Session(model, params())) {
          alone[i] = answer(session, MESSAGES[i]);
        }
      }
      try (PassGroup group = new PassGroup(model, new PassGroupParams().maxSequences(2).nThreads(2))) {
        for (int round = 0; round < 3; ++round) {
          String[] shared = new String[MESSAGES.length];
          Session[] sessions = {new Session(model, params().passGroup(group)),
                                new Session(model, params().passGroup(group))};
          Thread[] threads = new Thread[MESSAGES.length];
          for (int i = 0; i < MESSAGES.length; ++i) {
            final int n = i;
            threads[i] = new Thread(() -> shared[n] = answer(sessions[n], MESSAGES[n]));
            threads[i].start();
          }
          for (Thread t : threads) t.join();
          for (Session s : sessions) s.close();
          for (int i = 0; i < MESSAGES.length; ++i) {
            Check.equal(shared[i], alone[i], "answer " + i + " in round " + round);
          }
        }
        long[] passes = group.passesBySequences();
        Check.isTrue(passes.length == 2 && passes[1] > 0, "passes that took both sessions: "
            + java.util.Arrays.toString(passes));
      }
    }
  }

  @Test
  public void aGroupWithAnOpenMemberRefusesToClose() {
    try (Model model = Model.load(Fixtures.stories())) {
      PassGroup group = new PassGroup(model, new PassGroupParams());
      Session session = new Session(model, params().passGroup(group));
      boolean refused = false;
      try {
        group.close();
      } catch (IllegalStateException e) {
        refused = true;
      }
      Check.isTrue(refused, "close() with an open member");
      session.close();
      group.close();
    }
  }
}
