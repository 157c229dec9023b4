// Templates Jinja2 refuses, and constructs outside the supported subset: each
// must end in TemplateError naming the problem and where it is.
#include <gtest/gtest.h>

#include <string>

#include "jinja/template.h"

namespace {

using peak::jinja::Template;
using peak::jinja::TemplateError;
using peak::jinja::Value;

// Parses and renders `source`; returns the error, or fails the test.
TemplateError error_of(const std::string& source) {
  try {
    Template::parse(source).render(Value::dict());
  } catch (const TemplateError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for: " << source;
  return TemplateError("none");
}

TEST(JinjaSyntax, ErrorsNameTheLine) {
  const struct {
    const char* source;
    int line;
    const char* message_part;
  } cases[] = {
      {"a\n{% if x %}\nb", 3, "expected 'elif' or 'else' or 'endif'"},
      {"a\n\n{{ 1 + }}", 3, "unexpected 'end of print statement'"},
      {"{% for x in y %}\n{% endif %}", 2, "unknown or unsupported tag 'endif'"},
      {"{{ x }\n}", 1, "unexpected '}'"},
      {"{# never closed", 1, "Missing end of comment tag"},
      {"{% raw %}never closed", 1, "Missing end of raw directive"},
      {"ok\n{{ 'unterminated }}", 2, "unterminated string"},
      {"{{ (1, 2] }}", 1, "unexpected ']', expected ')'"},
      {"{% macro m(a=1, b) %}{% endmacro %}", 1, "non-default argument follows default argument"},
      {"{{ f(a=1, 2) }}", 1, "positional argument follows keyword argument"},
      {"{{ 1 is defined is defined }}", 1, "You cannot chain multiple tests with is"},
      {"{% break %}", 1, "'break' outside a loop"},
      {"{{ 99999999999999999999 }}", 1, "integer literal too large"},
      {"\n{{ x|no_such_filter }}", 2, "no filter named 'no_such_filter'"},
      {"\n\n{{ 1 is no_such_test }}", 3, "no test named 'no_such_test'"},
      {"{% set x = 1 %}\n{{ x.y.z }}", 2, "'int object' has no attribute 'y'"},
      {"{% set d = {0: 1} %}\n{{ d.get([0]) }}", 2, "unhashable type: 'list'"},
      {"a\n{% generation %}\nb", 3, "unexpected end of template, expected 'endgeneration'"},
      {"a\n{% generation %}b\n{% endfor %}", 3, "unknown or unsupported tag 'endfor'"},
      {"\n{% endgeneration %}", 2, "unknown or unsupported tag 'endgeneration'"},
      {"{% generation x %}b{% endgeneration %}", 1, "got 'x'"},
      {"{% generation %}b\n{% endgeneration x %}", 2, "got 'x'"},
      // Jinja2 refuses these too (the body compiles to a function) but names a line of its generated Python.
      {"{% for i in [1, 2] %}{% generation %}\n{% break %}{% endgeneration %}{% endfor %}", 2,
       "'break' outside a loop"},
      {"{% for i in [1, 2] %}{% generation %}{% continue %}{% endgeneration %}{% endfor %}", 1,
       "'continue' outside a loop"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.source);
    const TemplateError e = error_of(c.source);
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_NE(e.message().find(c.message_part), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("line " + std::to_string(c.line), 0), 0u) << e.what();
  }
}

TEST(JinjaSyntax, ColumnOfAnUnexpectedCharacter) {
  const TemplateError e = error_of("ab\n{{ 1 $ 2 }}");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), 6);
  EXPECT_EQ(std::string(e.what()), "line 2, column 6: unexpected char '$'");
}

TEST(JinjaSyntax, NoFileOrSystemAccess) {
  for (const char* tag : {"include 'x.j2'", "import 'x.j2' as x", "from 'x.j2' import y", "extends 'base.j2'",
                          "block body"}) {
    const TemplateError e = error_of(std::string("{% ") + tag + " %}");
    EXPECT_NE(e.message().find("is not supported: templates cannot reach other templates or files"), std::string::npos)
        << e.what();
  }
  // Python internals do not exist: attributes starting with "_" are undefined, as
  // in Jinja2's sandbox, and so print nothing...
  EXPECT_EQ(Template::parse("{{ ''.__class__ }}{{ [].__len__ }}{{ x.__dict__ }}").render(Value::dict().set("x", Value::dict())), "");
  // ...and calling one fails.
  EXPECT_NE(error_of("{{ ''.__class__.__mro__() }}").message().find("has no attribute"), std::string::npos);
}

TEST(JinjaSyntax, UnsupportedConstructsAreNamed) {
  EXPECT_NE(error_of("{% for x in y recursive %}{% endfor %}").message().find("recursive for loops"), std::string::npos);
  EXPECT_NE(error_of("{{ f(*args) }}").message().find("*args and **kwargs"), std::string::npos);
  EXPECT_NE(error_of("{% do x %}").message().find("unknown or unsupported tag 'do'"), std::string::npos);
  EXPECT_NE(error_of("{{ '\\N{BULLET}' }}").message().find("\\N{...}"), std::string::npos);
  // Jinja2 would print {Undefined: 1} and <Namespace {}> keys.
  EXPECT_EQ(error_of("{{ {x: 1} }}").message(), "a dict key cannot be undefined ('x' is undefined)");
  EXPECT_EQ(error_of("{{ {namespace(): 1} }}").message(), "a dict key cannot be of type 'object'");
}

TEST(JinjaSyntax, RaisedMessageIsExact) {
  try {
    Template::parse("\n{{ raise_exception('Roles must alternate') }}").render(Value::dict());
    FAIL();
  } catch (const peak::jinja::TemplateRaised& e) {
    EXPECT_STREQ(e.what(), "Roles must alternate");
  }
}

TEST(JinjaSyntax, ValueBuildersHaveValueSemantics) {
  Value message = Value::dict().set("role", "user").set("content", "Hello");
  Value messages = Value::list();
  messages.push_back(message);
  message.set("content", "changed");  // the list holds its own copy
  const Value context = Value::dict().set("messages", messages).set("add_generation_prompt", true).set("n", 3).set("x", 0.5);
  EXPECT_EQ(Template::parse("{{ messages[0].content }} {{ add_generation_prompt }} {{ n * x }}").render(context),
            "Hello True 1.5");
}

}  // namespace
