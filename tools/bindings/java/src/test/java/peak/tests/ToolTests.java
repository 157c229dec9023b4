package peak.tests;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import peak.GenerateOptions;
import peak.Message;
import peak.Model;
import peak.ParsedResponse;
import peak.Peak;
import peak.Role;
import peak.SamplerParams;
import peak.Session;
import peak.SessionParams;
import peak.Status;
import peak.ToolCall;
import peak.ToolChoice;
import peak.ToolParseParams;

/**
 * Sessions with tools on tests/chat's scripted Qwen3 models, whose real Qwen3 template writes the
 * tools, Hermes calls and tool results: what the C API documents for each call, seen from Java.
 */
public final class ToolTests {
  /** One tool whose only argument is one of two cities. */
  private static final String TOOLS = "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", "
      + "\"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"enum\": [\"Paris\", \"Oslo\"]}}, "
      + "\"required\": [\"city\"]}}}]";

  private static final String QUESTION = "Weather in Paris?";

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

  private static GenerateOptions options() {
    return new GenerateOptions().maxTokens(200);
  }

  /** Checks the scripted model's call: get_weather of one of the two cities its enum allows. */
  private static void checkWeatherCall(ToolCall call, String what) {
    Check.equal("get_weather", call.name(), what + ": name");
    String arguments = Texts.compactJson(call.arguments());
    Check.isTrue(arguments.equals("{\"city\":\"Paris\"}") || arguments.equals("{\"city\":\"Oslo\"}"),
        what + ": arguments " + call.arguments());
  }

  private static void checkMessage(Role role, String text, Message message, String what) {
    Check.equal(role, message.role(), what + ": role");
    Check.equal(text, message.text(), what + ": text");
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

  @Test
  public void requiredCallItsResultAndTheAnswer() {
    try (Model model = Model.load(Fixtures.scriptedQwen3());
         Session session = new Session(model, toolParams(ToolChoice.REQUIRED))) {
      // Required: a call, though the model would answer "Blue."; none of its markup streams.
      StringBuilder text = new StringBuilder();
      session.chat(QUESTION, options(), text::append);
      Check.equal("", text.toString(), "streamed text");
      List<ToolCall> calls = session.toolCalls();
      Check.equal(1, calls.size(), "calls");
      ToolCall call = calls.get(0);
      checkWeatherCall(call, "the call");
      Check.equal("call_t1c0", call.id(), "the first answer's first call's id");

      Check.throwsPeak(Status.INVALID_ARGUMENT, "append_tool_result", () -> session.chat("Hi", options(), null));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "no call with the id 'call_none'",
          () -> session.addToolResult("call_none", "x"));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "have no results yet", () -> session.continueTurn(options(), null));
      session.addToolResult(call.id(), "Sunny");
      Check.throwsPeak(Status.INVALID_ARGUMENT, "has its result already", () -> session.addToolResult(call.id(), "Sunny"));
      Check.throwsA(NullPointerException.class, () -> session.addToolResult(null, "x"));
      Check.throwsA(NullPointerException.class, () -> session.addToolResult(call.id(), null));

      List<Message> messages = session.messages();
      Check.equal(3, messages.size(), "messages before the answer");
      checkMessage(Role.USER, QUESTION, messages.get(0), "message 0");
      checkMessage(Role.ASSISTANT, "", messages.get(1), "the answer that only called");
      checkMessage(Role.TOOL, "Sunny", messages.get(2), "the result");
      Check.equal(calls, session.toolCalls(), "the last answer's calls, its result after it");

      Check.throwsPeak(Status.INVALID_ARGUMENT, "'get_time', which is not among the tools (get_weather)",
          () -> session.setToolChoice(ToolChoice.FUNCTION, "get_time", true));
      Check.throwsA(NullPointerException.class, () -> session.setToolChoice(null, null, true));
      session.setToolChoice(ToolChoice.AUTO, null, true);
      session.continueTurn(options(), text::append);
      Check.equal("Blue.", text.toString(), "the answer to the result");
      Check.equal(0, session.toolCalls().size(), "the answer's calls");
      Check.equal(4, session.messageCount(), "messages");
      checkMessage(Role.ASSISTANT, "Blue.", session.message(3), "the answer");
      Check.throwsPeak(Status.INVALID_ARGUMENT, "no tool result waits", () -> session.continueTurn(null));
      // Qwen3's template writes a result as a user message in <tool_response>.
      Check.contains(session.previewPrompt("x"), "<|im_start|>user\n<tool_response>\nSunny\n</tool_response><|im_end|>",
          "the result in the prompt");
    }
  }

  @Test
  public void replayedCallsAndResultsAreAnswered() {
    ToolCall call = new ToolCall("call_1", "get_weather", "{\"city\": \"Paris\"}");
    try (Model model = Model.load(Fixtures.scriptedQwen3());
         Session session = new Session(model, toolParams(ToolChoice.REQUIRED))) {
      Check.throwsPeak(Status.INVALID_ARGUMENT, "roles alternate",
          () -> session.appendToolCalls(null, Collections.singletonList(call)));
      session.append(Role.USER, QUESTION);
      Check.throwsPeak(Status.INVALID_ARGUMENT, "calls[0].id is empty",
          () -> session.appendToolCalls(null, Collections.singletonList(new ToolCall("", "get_weather", "{}"))));
      Check.throwsA(NullPointerException.class, () -> session.appendToolCalls(null, Arrays.asList(call, null)));
      Check.throwsA(NullPointerException.class, () -> session.appendToolCalls(null, null));
      Check.throwsA(NullPointerException.class, () -> new ToolCall(null, "get_weather", "{}"));
      Check.equal(1, session.messageCount(), "refused calls change nothing");

      session.appendToolCalls(null, Collections.singletonList(call));
      Check.equal(Collections.singletonList(call), session.toolCalls(), "the replayed calls");
      // Qwen3's template writes the call after the answer's header.
      Check.contains(session.previewPrompt("x"),
          "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>",
          "the replayed call in the prompt");
      session.addToolResult("call_1", "Sunny");
      session.setToolChoice(ToolChoice.AUTO, null, true);
      StringBuilder text = new StringBuilder();
      session.continueTurn(text::append);
      Check.equal("Blue.", text.toString(), "the answer to the replayed result");
      Check.equal(4, session.messageCount(), "messages");
      checkMessage(Role.TOOL, "Sunny", session.message(2), "the result");
    }
  }

  /** What a listener heard: each call, its index, and whether the turn had returned by then. */
  private static final class Heard {
    final List<ToolCall> calls = new ArrayList<>();
    final List<Integer> indexes = new ArrayList<>();
    boolean afterTheTurn;
    boolean turnReturned;

    void hear(ToolCall call, int index) {
      calls.add(call);
      indexes.add(index);
      afterTheTurn |= turnReturned;
    }
  }

  @Test
  public void theListenerHearsEachCallDuringTheTurn() {
    try (Model model = Model.load(Fixtures.scriptedQwen3());
         Session session = new Session(model, toolParams(ToolChoice.REQUIRED))) {
      Heard first = new Heard();
      session.setToolCallListener(first::hear);
      session.chat(QUESTION, options(), null);
      first.turnReturned = true;
      Check.equal(session.toolCalls(), first.calls, "the calls heard");
      Check.equal(Collections.singletonList(0), first.indexes, "their indexes");
      Check.isTrue(!first.afterTheTurn, "heard before chat returned");
      checkWeatherCall(first.calls.get(0), "the call heard");

      // Another listener replaces the first; null removes it.
      Heard second = new Heard();
      session.setToolCallListener(second::hear);
      session.regenerate(options(), null);
      Check.equal(1, first.calls.size(), "calls the replaced listener heard");
      Check.equal(session.toolCalls(), second.calls, "the regenerated answer's calls heard");
      Check.equal("call_t2c0", second.calls.get(0).id(), "the second answer's call's id");
      session.setToolCallListener(null);
      session.regenerate(options(), null);
      Check.equal(1, second.calls.size(), "calls heard without a listener");
      Check.equal(1, session.toolCalls().size(), "the answer still calls");
    }
  }

  @Test
  public void aListenersExceptionComesOutOfTheTurn() {
    // The call script opens a call of its own accord under AUTO.
    try (Model model = Model.load(Fixtures.scriptedQwen3Call());
         Session session = new Session(model, toolParams(ToolChoice.AUTO))) {
      RuntimeException boom = new IllegalStateException("no weather today");
      int[] heard = new int[1];
      session.setToolCallListener((call, index) -> {
        ++heard[0];
        checkWeatherCall(call, "the call heard");
        Check.throwsA(IllegalStateException.class, () -> session.setToolCallListener(null));
        throw boom;
      });
      RuntimeException thrown =
          Check.throwsA(IllegalStateException.class, () -> session.chat(QUESTION, options(), null));
      Check.isTrue(thrown == boom, "the listener's own exception is rethrown: " + thrown);
      Check.equal(1, heard[0], "calls heard");
      session.setToolCallListener(null);
      Check.equal(2, session.messageCount(), "the question and its answer");
    }
  }

  @Test
  public void theModelsTemplateTellsTheFormatOfAnAnswer() {
    String text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>";
    try (Model model = Model.load(Fixtures.scriptedQwen3())) {
      // Qwen3's template writes past calls as Hermes does.
      ParsedResponse r = Peak.parseResponse(model, text);
      Check.equal(1, r.toolCalls().size(), "calls read in the template's format");
      Check.equal("get_weather", r.toolCalls().get(0).name(), "the call's name");
      Check.equal("{\"city\":\"Oslo\"}", Texts.compactJson(r.toolCalls().get(0).arguments()), "its arguments");
      Check.equal(null, r.content(), "content");
    }
    try (Model vocab = Model.loadVocab(Fixtures.scriptedQwen3())) {
      Check.throwsPeak(Status.INVALID_ARGUMENT, "without weights", () -> Peak.parseResponse(vocab, text));
      ParsedResponse r = Peak.parseResponse(vocab, text, new ToolParseParams().formatName("hermes"));
      Check.equal(1, r.toolCalls().size(), "calls read in the format named");
    }
  }
}
