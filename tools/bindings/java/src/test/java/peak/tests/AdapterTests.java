package peak.tests;

import java.io.File;
import java.util.Arrays;
import java.util.Collections;
import peak.Adapter;
import peak.AdapterInfo;
import peak.AdapterKind;
import peak.Context;
import peak.ContextParams;
import peak.GenerateOptions;
import peak.Model;
import peak.SamplerParams;
import peak.Session;
import peak.SessionParams;
import peak.Status;

/**
 * LoRA adapters at run time, against the model `peak lora merge` writes with the adapter merged
 * in: the same greedy text at the same scale.
 */
public final class AdapterTests {
  private static final String PROMPT = "Once upon a time";

  /** Runs the peak tool; false when the build has none. */
  private static boolean peak(String... args) throws Exception {
    String cli = Fixtures.cli();
    if (cli == null) {
      System.out.println("(no peak tool in this build to write an adapter: nothing to test)");
      return false;
    }
    String[] command = new String[args.length + 1];
    command[0] = cli;
    System.arraycopy(args, 0, command, 1, args.length);
    File log = new File(Fixtures.scratch("adapter"), "peak.log");
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log).start();
    Check.equal(0, p.waitFor(), "peak " + String.join(" ", args));
    return true;
  }

  private static String greedy(Model model, Adapter.Use... uses) {
    try (Context context = new Context(model, new ContextParams().nCtx(256).nThreads(1))) {
      context.setAdapters(uses);
      return Texts.greedyByArgmax(model, context, PROMPT, 32);
    }
  }

  @Test
  public void runTimeAdapterEqualsTheMergedModel() throws Exception {
    File dir = Fixtures.scratch("adapter");
    String adapterPath = new File(dir, "adapter.gguf").getPath();
    String mergedPath = new File(dir, "merged-0.5.gguf").getPath();
    if (!peak("lora", "synth", Fixtures.stories(), adapterPath, "--rank", "8", "--alpha", "16", "--seed", "3")
        || !peak("lora", "merge", Fixtures.stories(), adapterPath, mergedPath, "--scale", "0.5")) {
      return;
    }
    try (Model model = Model.load(Fixtures.stories());
         Model merged = Model.load(mergedPath);
         Adapter adapter = Adapter.load(model, adapterPath)) {
      AdapterInfo info = adapter.info();
      Check.equal(AdapterKind.LORA, info.kind(), "kind");
      Check.equal(35, info.nTargets(), "adapted matrices");
      Check.equal(8, info.minRank(), "rank");
      Check.equal(8, info.maxRank(), "rank");
      Check.isTrue(info.alpha() == 16, "alpha " + info.alpha());

      String base = greedy(model);
      Check.equal(base, greedy(model, adapter.use(0)), "scale 0: the model as it is");
      String adapted = greedy(model, adapter.use(0.5f));
      Check.isTrue(!adapted.equals(base), "the adapter changes the text");
      Check.equal(greedy(merged), adapted, "scale 0.5 at run time against the merged model");
      try (Context context = new Context(model, new ContextParams().nCtx(256).nThreads(1))) {
        context.setAdapters(Collections.singletonList(adapter.use(0.5f)), 0, Long.MAX_VALUE);
        Check.equal(adapted, Texts.greedyByArgmax(model, context, PROMPT, 32), "the list form");
        context.setAdapters();
        context.clear();
        Check.equal(base, Texts.greedyByArgmax(model, context, PROMPT, 32), "no adapter again");
      }

      try (Session session = new Session(model, new SessionParams().chatTemplate("raw").nThreads(1)
          .sampler(SamplerParams.greedy()))) {
        session.chat("Hello.", new GenerateOptions().maxTokens(4), null);
        session.setAdapters(adapter.use(0.5f));
        session.chat("And then?", new GenerateOptions().maxTokens(4), null);
        Check.equal(4, session.messageCount(), "two turns");
      }
    }
  }

  @Test
  public void adaptersPeakRefuses() throws Exception {
    File dir = Fixtures.scratch("adapter");
    String adapterPath = new File(dir, "refused.gguf").getPath();
    if (!peak("lora", "synth", Fixtures.stories(), adapterPath, "--rank", "4", "--seed", "1")) return;
    String other = new File(new File(Fixtures.stories()).getParentFile(), "llama-2-tiny-random.gguf").getPath();
    try (Model model = Model.load(Fixtures.stories()); Model otherModel = Model.load(other)) {
      Check.throwsPeak(Status.IO, "/nonexistent-dir/a.gguf", () -> Adapter.load(model, "/nonexistent-dir/a.gguf"));
      // An adapter checked against another model names what does not fit.
      Check.throwsPeak(Status.FORMAT, "adapter tensor 'blk.0.attn_k.weight.lora_a' has shape [64, 4]",
          () -> Adapter.load(otherModel, adapterPath));
      try (Adapter adapter = Adapter.load(model, adapterPath);
           Context context = new Context(model, new ContextParams().nCtx(64));
           Context otherContext = new Context(otherModel, new ContextParams().nCtx(64))) {
        Check.throwsPeak(Status.INVALID_ARGUMENT, "adapter 0 was loaded for another model",
            () -> otherContext.setAdapters(adapter.use(1)));
        Check.throwsPeak(Status.INVALID_ARGUMENT, "the scale of adapter 0 is nan; it must be a finite number",
            () -> context.setAdapters(Arrays.asList(adapter.use(Float.NaN)), 0, Long.MAX_VALUE));
        Check.throwsPeak(Status.INVALID_ARGUMENT, "control_first_layer is -1",
            () -> context.setAdapters(Arrays.asList(adapter.use(1)), -1, 3));
      }
    }
  }
}
