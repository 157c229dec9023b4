package peak.tests;

import java.util.regex.Pattern;
import peak.Context;
import peak.ContextParams;
import peak.GenerateOptions;
import peak.GenerateResult;
import peak.Grammar;
import peak.Grammar.Verdict;
import peak.Message;
import peak.Model;
import peak.Sampler;
import peak.SamplerParams;
import peak.Session;
import peak.SessionParams;
import peak.Status;
import peak.StopReason;

/**
 * Grammars and JSON Schemas: Grammar's verdicts on texts a reader of the GBNF Guide and RFC 8259
 * judges, the refusals and their messages, and generation on stories260K held to a schema.
 */
public final class GrammarTests {
  /** An object of one boolean, "ok": whitespace bounded, so every text of it is short. */
  private static final String FLAG_SCHEMA =
      "{\"type\": \"object\", \"properties\": {\"ok\": {\"type\": \"boolean\"}}, \"required\": [\"ok\"],"
          + " \"additionalProperties\": false}";
  /**
   * FLAG_SCHEMA's texts read from RFC 8259 (whitespace: space, tab, line feed, carriage return).
   * The schema's grammar may allow less whitespace, never more.
   */
  private static final Pattern FLAG_JSON = Pattern.compile("\\{[ \\t\\n\\r]*\"ok\"[ \\t\\n\\r]*:[ \\t\\n\\r]*(true|false)[ \\t\\n\\r]*\\}");

  /** One word of lower-case Latin-1 letters, a space, then one emoji of U+1F600..U+1F64F. */
  private static final String WORD_EMOJI = "root ::= word \" \" emoji\nword ::= [a-z\u00e0-\u00ff]+\nemoji ::= [\uD83D\uDE00-\uD83D\uDE4F]\n";

  @Test
  public void verdictsOnUtf8TextsAgainstCharacterClasses() {
    try (Grammar g = Grammar.fromGbnf(WORD_EMOJI, null)) {
      Check.equal(Verdict.COMPLETE, g.check("caf\u00e9 \uD83D\uDE42"), "café 🙂");  // U+1F642 in the class
      Check.equal(Verdict.COMPLETE, g.check("\u00e9 \uD83D\uDE00"), "é 😀, the class's first emoji");
      Check.equal(Verdict.PREFIX, g.check("caf\u00e9"), "café: a space and an emoji may follow");
      Check.equal(Verdict.PREFIX, g.check("caf\u00e9 "), "café and a space");
      Check.equal(Verdict.PREFIX, g.check(""), "nothing yet");
      Check.equal(Verdict.REJECTED, g.check("caf\u00e9 \uD83D\uDE42\uD83D\uDE42"), "two emoji");
      Check.equal(Verdict.REJECTED, g.check("caf\u00e9 \uD83D\uDE80"), "U+1F680 is past the class");
      Check.equal(Verdict.REJECTED, g.check("caf\u20ac"), "€ (U+20AC) is no letter of the class");
      Check.equal(Verdict.REJECTED, g.check("CAF\u00c9"), "upper case");
      Check.equal(Verdict.REJECTED, g.check("caf\u00e9 \uD83D"), "an unpaired surrogate is U+FFFD");
      Check.equal(Verdict.REJECTED, g.check("caf\u0000"), "a NUL character is part of the text");
    }
    try (Grammar g = Grammar.fromGbnf("answer ::= \"yes\" | \"no\"\n", "answer")) {
      Check.equal(Verdict.COMPLETE, g.check("no"), "no, from the rule named root");
      Check.equal(Verdict.PREFIX, g.check("ye"), "ye");
      Check.equal(Verdict.REJECTED, g.check("yes!"), "yes!");
    }
  }

  @Test
  public void verdictsOfJsonSchemas() {
    try (Grammar any = Grammar.fromJsonSchema("{}");
         Grammar flag = Grammar.fromJsonSchema(FLAG_SCHEMA)) {
      Check.equal(Verdict.COMPLETE, any.check("[1, \"\u00e9\uD83D\uDE42\", null]"), "any JSON value");
      Check.equal(Verdict.PREFIX, any.check("tru"), "tru");
      Check.equal(Verdict.COMPLETE, flag.check("{\"ok\": true}"), "the flag");
      Check.equal(Verdict.PREFIX, flag.check("{\"ok\": "), "the flag's start");
      Check.equal(Verdict.REJECTED, flag.check("{\"ok\": 1}"), "a number for a boolean");
      Check.equal(Verdict.REJECTED, flag.check("{\"no\": true}"), "another property");
    }
  }

  @Test
  public void refusedGrammarsNameWhereTheyAreWrong() {
    Check.throwsPeak(Status.INVALID_ARGUMENT, "line 1, column 14: undefined rule 'bogus'",
        () -> Grammar.fromGbnf("root ::= \"a\" bogus\n", null));
    Check.throwsPeak(Status.INVALID_ARGUMENT, "line 2, column 11: undefined rule 'bogus'",
        () -> Grammar.fromGbnf("root ::= \"a\" x\nx ::= \"b\" bogus\n", null));
    Check.throwsPeak(Status.INVALID_ARGUMENT, "root", () -> Grammar.fromGbnf("answer ::= \"a\"\n", null));
    Check.throwsPeak(Status.INVALID_ARGUMENT, "at /properties/a",
        () -> Grammar.fromJsonSchema("{\"properties\": {\"a\": {\"type\": \"integr\"}}}"));
    Check.throwsPeak(Status.INVALID_ARGUMENT, "at the root", () -> Grammar.fromJsonSchema("{\"type\": "));
    Check.throwsPeak(Status.INVALID_ARGUMENT, "gbnf holds a NUL character",
        () -> Grammar.fromGbnf("root ::= \"a\"\u0000", null));
    Check.throwsA(NullPointerException.class, () -> Grammar.fromGbnf(null, null));
    Check.throwsA(NullPointerException.class, () -> Grammar.fromJsonSchema(null));
  }

  @Test
  public void samplerParametersPeakRefuses() {
    try (Model model = Model.load(Fixtures.stories())) {
      Check.throwsPeak(Status.INVALID_ARGUMENT, "line 1, column 14: undefined rule 'bogus'",
          () -> new Sampler(model, new SamplerParams().grammar("root ::= \"a\" bogus\n")));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "peak_sampler_params.json_schema: at /properties/a",
          () -> new Sampler(model, new SamplerParams().jsonSchema("{\"properties\": {\"a\": {\"type\": \"integr\"}}}")));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "grammar and json_schema are both set",
          () -> new Sampler(model, new SamplerParams().jsonSchema("{}").grammar("root ::= \"a\"\n")));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "grammar_root and json_schema",
          () -> new Sampler(model, new SamplerParams().jsonSchema("{}").grammarRoot("root")));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "json_schema holds a NUL character",
          () -> new Sampler(model, new SamplerParams().jsonSchema("{}\u0000")));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "peak_sampler_params.grammar",
          () -> new Session(model, new SessionParams().chatTemplate("raw").sampler(new SamplerParams().grammar("root ::= \"unclosed\n"))));
      SamplerParams defaults = new SamplerParams();
      Check.isTrue(defaults.grammar() == null && defaults.grammarRoot() == null && defaults.jsonSchema() == null,
          "no grammar by default");
    }
  }

  @Test
  public void generationUnderAJsonSchemaIsOneOfItsTexts() {
    try (Model model = Model.load(Fixtures.stories());
         Context context = new Context(model, new ContextParams().nCtx(256).nThreads(1));
         Sampler sampler = new Sampler(model, new SamplerParams().jsonSchema(FLAG_SCHEMA).seed(7));
         Grammar flag = Grammar.fromJsonSchema(FLAG_SCHEMA)) {
      StringBuilder text = new StringBuilder();
      GenerateResult r = context.generate(sampler, "Once upon a time", new GenerateOptions().maxTokens(128), text::append);
      Check.equal(StopReason.END_OF_GENERATION, r.stopReason(), "stopped at the schema's end: " + text);
      Check.isTrue(FLAG_JSON.matcher(text).matches(), "JSON of the schema: " + text);
      Check.equal(Verdict.COMPLETE, flag.check(text.toString()), "verdict on " + text);
    }
  }

  @Test
  public void sessionAnswersUnderAGrammar() {
    SessionParams params = new SessionParams().chatTemplate("raw").nThreads(1)
        .sampler(new SamplerParams().jsonSchema(FLAG_SCHEMA).seed(7));
    try (Model model = Model.load(Fixtures.stories());
         Session session = new Session(model, params);
         Grammar flag = Grammar.fromJsonSchema(FLAG_SCHEMA)) {
      String answer = answer(session, "Is Tom happy?");
      Check.isTrue(FLAG_JSON.matcher(answer).matches(), "JSON of the schema: " + answer);
      Check.equal(Verdict.COMPLETE, flag.check(answer), "verdict on " + answer);
      Message last = session.message(session.messageCount() - 1);
      Check.equal(answer, last.text(), "the answer kept");

      // A grammar from a named rule from the next answer on; one that does not compile changes nothing.
      session.setSampler(new SamplerParams().grammar("answer ::= \"r\u00e9d\" | \"bl\u00fc\"\n").grammarRoot("answer").seed(7));
      Check.isTrue(answer(session, "What colour is the ball?").matches("r\u00e9d|bl\u00fc"), "one of the colours");
      Check.throwsPeak(Status.INVALID_ARGUMENT, "peak_sampler_params.grammar",
          () -> session.setSampler(new SamplerParams().grammar("root ::= \"unclosed\n")));
      Check.isTrue(answer(session, "And the cat?").matches("r\u00e9d|bl\u00fc"), "still one of the colours");
    }
  }

  private static String answer(Session session, String text) {
    StringBuilder answer = new StringBuilder();
    GenerateResult r = session.chat(text, new GenerateOptions().maxTokens(128), answer::append);
    Check.equal(StopReason.END_OF_GENERATION, r.stopReason(), "stopped at the grammar's end: " + answer);
    return answer.toString();
  }

  @Test
  public void closedGrammars() {
    Grammar g = Grammar.fromJsonSchema("{}");
    Check.equal(Verdict.COMPLETE, g.check("null"), "null");
    g.close();
    g.close();  // again: nothing
    Check.contains(Check.throwsA(IllegalStateException.class, () -> g.check("null")).getMessage(), "Grammar is closed",
        "a closed grammar");
    try (Grammar open = Grammar.fromJsonSchema("{}")) {
      Check.throwsA(NullPointerException.class, () -> open.check(null));
    }
  }
}
