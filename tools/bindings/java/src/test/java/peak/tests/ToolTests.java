package peak.tests;

import peak.Model;
import peak.SamplerParams;
import peak.Session;
import peak.SessionParams;
import peak.Status;
import peak.ToolChoice;

/**
 * Sessions with tools on tests/chat's scripted Qwen3 models, whose real Qwen3 template writes the
 * tools, Hermes calls and tool results: what the C API documents for each call, seen from Java.
 */
public final class ToolTests {
  /** One tool whose only argument is one of two cities. */
  private static final String TOOLS = "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", "
      + "\"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"enum\": [\"Paris\", \"Oslo\"]}}, "
      + "\"required\": [\"city\"]}}}]";

  private static SessionParams toolParams(ToolChoice choice) {
    return new SessionParams()
        .mode(peak.MemoryMode.WINDOW)
        .recentMax(1024)
        .headroom(256)
        .nThreads(1)
        .sampler(SamplerParams.greedy())
        .tools(TOOLS)
        .toolChoice(choice);
  }

  @Test
  public void paramsStartWithoutToolsAndWithAuto() {
    SessionParams p = new SessionParams();
    Check.equal(null, p.tools(), "tools");
    Check.equal(ToolChoice.AUTO, p.toolChoice(), "tool choice");
    Check.equal(null, p.toolFunction(), "tool function");
    Check.isTrue(p.parallelToolCalls(), "parallel tool calls");
    Check.equal(null, p.toolCallFormat(), "tool call format");
  }

  @Test
  public void theTemplateWritesTheToolsUnlessTheChoiceIsNone() {
    try (Model model = Model.load(Fixtures.scriptedQwen3());
         Session auto = new Session(model, toolParams(ToolChoice.AUTO));
         Session none = new Session(model, toolParams(ToolChoice.NONE))) {
      // Qwen3's template lists each tool as JSON inside <tools></tools> in the system message.
      String prompt = auto.previewPrompt("Weather in Paris?");
      Check.contains(prompt, "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\"", "the tools");
      Check.isTrue(!none.previewPrompt("Weather in Paris?").contains("get_weather"), "no tools under NONE");
    }
  }

  @Test
  public void toolsPeakRefusesAreNamed() {
    try (Model model = Model.load(Fixtures.scriptedQwen3())) {
      Check.throwsPeak(Status.INVALID_ARGUMENT, "tools[0].function.name: expected a string, not a number",
          () -> new Session(model, toolParams(ToolChoice.AUTO)
              .tools("[{\"type\": \"function\", \"function\": {\"name\": 3}}]")));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "'get_news', which is not among the tools (get_weather)",
          () -> new Session(model, toolParams(ToolChoice.FUNCTION).toolFunction("get_news")));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "grammar",
          () -> new Session(model, toolParams(ToolChoice.REQUIRED)
              .sampler(SamplerParams.greedy().grammar("root ::= \"x\"\n"))));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "tools_json holds a NUL character",
          () -> new Session(model, toolParams(ToolChoice.AUTO).tools("[]\u0000")));
      Check.throwsA(NullPointerException.class, () -> toolParams(null));
      // Refused sessions hold nothing: the model closes.
    }
  }
}
