package peak.tests;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import peak.CancellationToken;
import peak.Context;
import peak.ContextParams;
import peak.GenerateOptions;
import peak.GenerateResult;
import peak.Model;
import peak.PeakException;
import peak.Sampler;
import peak.SamplerParams;
import peak.Session;
import peak.SessionParams;
import peak.Status;
import peak.StopReason;

/** CancellationToken: from another thread, before a call, during the prompt and during generation. */
public final class CancellationTests {
  /** One token per batch on one thread: the long prompt is ~400 forward passes. */
  private static Context slowContext(Model model) {
    return new Context(model, new ContextParams().nCtx(512).nBatch(1).nThreads(1));
  }

  private static String greedyAfter(Model model, Context context, String prompt) {
    StringBuilder text = new StringBuilder();
    try (Sampler sampler = new Sampler(model, SamplerParams.greedy())) {
      context.generate(sampler, prompt, new GenerateOptions().maxTokens(16), text::append);
    }
    return text.toString();
  }

  @Test
  public void cancelFromAnotherThreadDuringThePrompt() throws Exception {
    String prompt = Texts.longPrompt();
    try (Model model = Model.load(Fixtures.stories()); Sampler sampler = new Sampler(model, SamplerParams.greedy())) {
      double full;
      try (Context timed = slowContext(model)) {
        long start = System.nanoTime();
        timed.generate(sampler, prompt, new GenerateOptions().maxTokens(1), null);
        full = (System.nanoTime() - start) * 1e-9;
      }
      String expected;
      try (Context fresh = slowContext(model)) {
        expected = greedyAfter(model, fresh, "Once upon a time");
      }

      // The store lands a quarter or half into the prompt's evaluation; a loaded machine may
      // delay the thread past it, so a few attempts are allowed.
      boolean cancelledPartWay = false;
      for (int attempt = 0; attempt < 8 && !cancelledPartWay; ++attempt) {
        CancellationToken token = new CancellationToken();
        long delayNanos = (long) (full * 1e9 * (attempt % 2 == 0 ? 0.25 : 0.5));
        try (Context context = slowContext(model)) {
          AtomicLong cancelledAt = new AtomicLong();
          Thread canceller = new Thread(() -> {
            try {
              Thread.sleep(delayNanos / 1000000, (int) (delayNanos % 1000000));
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            cancelledAt.set(System.nanoTime());
            token.cancel();
          });
          canceller.start();
          GenerateOptions options = new GenerateOptions().maxTokens(GenerateOptions.UNLIMITED).cancellation(token);
          long start = System.nanoTime();
          try {
            GenerateResult r = context.generate(sampler, prompt, options, null);
            // The store came after the prompt: generation stopped instead.
            Check.isTrue(r.stopReason() == StopReason.ABORTED || r.stopReason() == StopReason.CONTEXT_FULL
                || r.stopReason() == StopReason.END_OF_GENERATION, "stop reason " + r.stopReason());
          } catch (PeakException e) {
            double elapsed = (System.nanoTime() - start) * 1e-9;
            Check.equal(Status.CANCELLED, e.status(), "status");
            Check.contains(e.getMessage(), "cancelled", "message");
            Check.equal(0, context.nUsed(), "a cancelled prompt leaves the context as it was");
            canceller.join();
            // Cancelled after the call began, and the prompt was still being evaluated.
            cancelledPartWay = cancelledAt.get() > start;
            System.out.printf("cancelled after %.3f s of a %.3f s prompt%n", elapsed, full);
          }
          canceller.join();
          // Usable either way, and exactly as a fresh context.
          context.clear();
          sampler.reset();
          Check.equal(expected, greedyAfter(model, context, "Once upon a time"), "greedy text after the cancel");
        }
      }
      Check.isTrue(cancelledPartWay, "one attempt was cancelled while its prompt was evaluated");
    }
  }

  @Test
  public void tokenCancelledBeforeTheCallCancelsIt() {
    try (Model model = Model.load(Fixtures.stories());
         Context context = new Context(model, new ContextParams().nCtx(512));
         Sampler sampler = new Sampler(model, SamplerParams.greedy())) {
      context.eval(model.tokenize("Once upon a time", true, false));
      long used = context.nUsed();
      CancellationToken token = new CancellationToken();
      token.cancel();
      Check.isTrue(token.isCancelled(), "isCancelled");
      Check.throwsPeak(Status.CANCELLED, "cancelled",
          () -> context.generate(sampler, " there was a dog", new GenerateOptions().cancellation(token), null));
      Check.equal(used, context.nUsed(), "nothing was evaluated");
      token.reset();
      Check.isTrue(!token.isCancelled(), "reset");
      GenerateResult r = context.generate(sampler, " there was a dog",
          new GenerateOptions().maxTokens(4).cancellation(token), null);
      Check.equal(StopReason.MAX_TOKENS, r.stopReason(), "a reset token lets the call run");
    }
  }

  @Test
  public void cancelFromAnotherThreadDuringGeneration() throws Exception {
    try (Model model = Model.load(Fixtures.stories());
         Context context = new Context(model, new ContextParams().nCtx(512));
         Sampler sampler = new Sampler(model, SamplerParams.greedy())) {
      CancellationToken token = new CancellationToken();
      CountDownLatch firstPiece = new CountDownLatch(1);
      CountDownLatch cancelled = new CountDownLatch(1);
      Thread canceller = new Thread(() -> {
        try {
          firstPiece.await();
          token.cancel();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        cancelled.countDown();
      });
      canceller.start();
      StringBuilder text = new StringBuilder();
      // The first piece waits until the other thread cancelled: the next token sees the flag.
      GenerateResult r = context.generate(sampler, "Once upon a time",
          new GenerateOptions().maxTokens(GenerateOptions.UNLIMITED).cancellation(token), piece -> {
            text.append(piece);
            if (firstPiece.getCount() > 0) {
              firstPiece.countDown();
              try {
                cancelled.await();
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            }
          });
      canceller.join();
      Check.equal(StopReason.ABORTED, r.stopReason(), "stop reason");
      Check.equal(1, r.nGeneratedTokens(), "tokens generated before the flag was seen");
      Check.isTrue(text.length() > 0, "the text written is kept");
    }
  }

  @Test
  public void cancelledTurnLeavesTheSessionAsItWas() {
    try (Model model = Model.load(Fixtures.stories());
         Session session = new Session(model, new SessionParams().chatTemplate("raw").nThreads(1)
             .sampler(SamplerParams.greedy()))) {
      StringBuilder first = new StringBuilder();
      session.chat("Tell me a story.", new GenerateOptions().maxTokens(8), first::append);
      int messages = session.messageCount();
      CancellationToken token = new CancellationToken();
      token.cancel();
      Check.throwsPeak(Status.CANCELLED, "cancelled",
          () -> session.chat(Texts.longPrompt(), new GenerateOptions().cancellation(token), null));
      Check.equal(messages, session.messageCount(), "messages after a cancelled turn");
      StringBuilder next = new StringBuilder();
      session.chat("And then?", new GenerateOptions().maxTokens(8), next::append);
      Check.equal(messages + 2, session.messageCount(), "the next turn");
    }
  }
}
