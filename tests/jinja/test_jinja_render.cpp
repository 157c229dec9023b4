// Renders of small templates, one behaviour each: Python's printing, Jinja2's
// operators, scoping, loops, macros, whitespace control, filters, tests and
// methods. The expected strings follow Jinja2's documentation and Python's
// semantics; each was also checked against Jinja2 3.1.6 set up as Hugging Face
// sets it up (sandboxed, trim_blocks, lstrip_blocks, loopcontrols, its tojson).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "jinja/template.h"

namespace {

using peak::jinja::parse_json;
using peak::jinja::Template;

struct Case {
  const char* source;
  const char* context;  // JSON
  const char* expected;
};

peak::jinja::RenderOptions fixed_clock() {
  peak::jinja::RenderOptions options;
  options.strftime_now = [](const std::string& format) {
    EXPECT_EQ(format, "%d %b %Y");
    return std::string("22 Nov 2026");
  };
  return options;
}

void expect_renders(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.source);
    try {
      EXPECT_EQ(Template::parse(c.source).render(parse_json(c.context), fixed_clock()), c.expected);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

// The render must fail with TemplateError whose message (without the line) is `message`.
void expect_errors(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.source);
    try {
      Template::parse(c.source).render(parse_json(c.context));
      ADD_FAILURE() << "rendered without an error";
    } catch (const peak::jinja::TemplateError& e) {
      EXPECT_EQ(e.message(), c.expected);
    }
  }
}

TEST(JinjaRender, Print) {
  expect_renders({
      {"{{ none }}|{{ true }}|{{ false }}|{{ 42 }}|{{ -7 }}",
       "{}",
       "None|True|False|42|-7"},
      {"{{ 1.0 }}|{{ 0.1 + 0.2 }}|{{ 1e16 }}|{{ 1.5e-7 }}|{{ 0.0001 }}|{{ 0.00001 }}|{{ 1/3 }}",
       "{}",
       "1.0|0.30000000000000004|1e+16|1.5e-07|0.0001|1e-05|0.3333333333333333"},
      {"{{ 123456789012345678.0 }}|{{ 2.5e300 * 10 }}|{{ -0.0 }}|{{ 100.0 }}",
       "{}",
       "1.2345678901234568e+17|2.5e+301|-0.0|100.0"},
      {"{{ [1, 'a', none, true, 1.5] }}|{{ {'k': 'v', 'n': [1]} }}|{{ (1, 2) }}|{{ (1,) }}|{{ () }}",
       "{}",
       "[1, 'a', None, True, 1.5]|{'k': 'v', 'n': [1]}|(1, 2)|(1,)|()"},
      {"{{ [\"it's\", 'say \"hi\"', 'both \\' \"', 'tab\\tnl\\n\\\\'] }}",
       "{}",
       "[\"it's\", 'say \"hi\"', 'both \\' \"', 'tab\\tnl\\n\\\\']"},
      {"{{ ['\\x01', '\\x7f', 'é', '日本'] }}",
       "{}",
       "['\\x01', '\\x7f', 'é', '日本']"},
      {"{{ missing }}|{{ missing is defined }}|{{ missing is undefined }}",
       "{}",
       "|False|True"},
      {"{{ 'a' 'b' }}|{{ 'x' ~ 1 ~ 2.0 ~ none ~ true ~ missing }}",
       "{}",
       "ab|x12.0NoneTrue"},
      {"{{ messages[0].content }}|{{ messages[0]['role'] }}|{{ messages[1] }}",
       "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}",
       "hi|user|"},
  });
}

TEST(JinjaRender, Literals) {
  expect_renders({
      {"{{ 'a\\nb' }}|{{ \"q\\\"q\" }}|{{ '\\u00e9\\x41\\101' }}|{{ '\\d' }}|{{ 'tab\\there' }}",
       "{}",
       "a\nb|q\"q|éAA|\\d|tab\there"},
      {"{{ 0x1F }}|{{ 0o17 }}|{{ 0b101 }}|{{ 1_000 }}|{{ 1_0.5 }}|{{ 2e3 }}",
       "{}",
       "31|15|5|1000|10.5|2000.0"},
      {"{{ True }}{{ False }}{{ None }}|{{ [1, 2,] }}|{{ {'a': 1,} }}",
       "{}",
       "TrueFalseNone|[1, 2]|{'a': 1}"},
  });
}

TEST(JinjaRender, Operators) {
  expect_renders({
      {"{{ 7 // 2 }}|{{ -7 // 2 }}|{{ -7 % 3 }}|{{ 7 % -3 }}|{{ 7.5 % 2 }}|{{ -7.5 // 2 }}|{{ 3 / 2 }}|{{ 4 / 2 }}",
       "{}",
       "3|-4|2|-2|1.5|-4.0|1.5|2.0"},
      {"{{ 2 ** 10 }}|{{ 2 ** -1 }}|{{ 2.0 ** 2 }}|{{ 2 ** 3 ** 2 }}|{{ -2 ** 2 }}",
       "{}",
       "1024|0.5|4.0|64|4"},
      {"{{ 1 + 2 * 3 }}|{{ (1 + 2) * 3 }}|{{ 10 - 2 - 3 }}|{{ true + 1 }}|{{ 1 + 1.5 }}",
       "{}",
       "7|9|5|2|2.5"},
      {"{{ 'ab' * 3 }}|{{ 2 * 'x' }}|{{ [1] * 2 }}|{{ [1] + [2] }}|{{ 'a' + 'b' }}|{{ 'a' * 0 }}|{{ 'a' * -1 }}",
       "{}",
       "ababab|xx|[1, 1]|[1, 2]|ab||"},
      {"{{ 1 ~ 2 + 3 if false else 'x' }}|{{ 'a' ~ 'b' * 2 }}",
       "{}",
       "x|abb"},
      {"{{ -1|abs }}|{{ -(3) }}|{{ +4 }}|{{ not 0 }}|{{ not not 'x' }}",
       "{}",
       "1|-3|4|True|True"},
  });
}

TEST(JinjaRender, Compare) {
  expect_renders({
      {"{{ 1 == 1.0 }}|{{ true == 1 }}|{{ '1' == 1 }}|{{ [1] == [1.0] }}|{{ (1,2) == [1,2] }}|{{ {'a':1} == {'a':1.0} }}",
       "{}",
       "True|True|False|True|False|True"},
      {"{{ 1 < 2 < 3 }}|{{ 3 > 2 > 2 }}|{{ 'abc' < 'abd' }}|{{ [1,2] < [1,3] }}|{{ 2 >= 2.0 }}|{{ 1 != 2 }}",
       "{}",
       "True|False|True|True|True|True"},
      {"{{ 'b' in 'abc' }}|{{ 2 in [1,2] }}|{{ 'k' in {'k':1} }}|{{ 'x' not in 'abc' }}|{{ 3 not in [1] }}|{{ 'a' in missing }}",
       "{}",
       "True|True|True|True|True|False"},
      {"{{ missing == missing }}|{{ none == missing }}|{{ none == none }}",
       "{}",
       "True|False|True"},
  });
}

TEST(JinjaRender, Logic) {
  expect_renders({
      {"{{ 0 or 'x' }}|{{ 'a' and 'b' }}|{{ '' and 'b' }}|{{ none or [] }}|{{ 1 and 0 or 2 }}",
       "{}",
       "x|b||[]|2"},
      {"{{ 'y' if 1 else 'n' }}|{{ 'y' if 0 else 'n' }}|{{ 'y' if 0 }}|{{ ('y' if 0) is defined }}|{{ 'a' if 0 else 'b' if 1 else 'c' }}",
       "{}",
       "y|n||False|b"},
  });
}

TEST(JinjaRender, Truthiness) {
  expect_renders({
      {"{% for v in [0, 0.0, '', [], {}, none, 1, 'a', [0], {'a': 0}] %}{{ 'T' if v else 'F' }}{% endfor %}",
       "{}",
       "FFFFFFTTTT"},
  });
}

TEST(JinjaRender, Subscript) {
  expect_renders({
      {"{{ 'abc'[1] }}|{{ 'abc'[-1] }}|{{ [1,2,3][-1] }}|{{ [1,2][5] }}|{{ 'abc'[10] }}|{{ {'a':1}['b'] }}|{{ d.x }}|{{ d['x'] }}",
       "{\"d\": {\"x\": 7}}",
       "b|c|3||||7|7"},
      {"{{ 'abcdef'[1:3] }}|{{ 'abc'[::-1] }}|{{ [1,2,3,4][::2] }}|{{ [1,2,3][5:] }}|{{ [1,2,3][-2:] }}|{{ [1,2,3][:-1] }}|{{ (1,2,3)[1:] }}",
       "{}",
       "bc|cba|[1, 3]|[]|[2, 3]|[1, 2]|(2, 3)"},
      {"{{ '日本語'[1:] }}|{{ '日本語'[-1] }}|{{ '日本語'|length }}|{{ 'héllo'[1] }}",
       "{}",
       "本語|語|3|é"},
      {"{{ [[1, 2], [3]][0][1] }}|{{ items.0 }}|{{ items.x }}",
       "{\"items\": [\"first\"]}",
       "2|first|"},
  });
}

TEST(JinjaRender, Tests) {
  expect_renders({
      {"{{ x is iterable }}{{ none is iterable }}{{ {} is sequence }}{{ '' is sequence }}{{ true is number }}{{ true is integer }}{{ 1 is integer }}{{ 1.0 is float }}{{ {} is mapping }}{{ [] is mapping }}",
       "{}",
       "TrueFalseTrueTrueTrueFalseTrueTrueTrueFalse"},
      {"{{ raise_exception is callable }}{{ 'a'.upper is callable }}{{ 6 is divisibleby 3 }}{{ 3 is odd }}{{ 4 is even }}{{ 1 is eq 1 }}{{ 1 is ne 2 }}{{ 2 is gt 1 }}{{ 'ab' is lower }}{{ 'AB' is upper }}{{ 1 is in [1] }}",
       "{}",
       "TrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrue"},
      {"{{ x is none }}{{ none is none }}{{ true is true }}{{ 1 is true }}{{ false is false }}{{ true is boolean }}{{ 'a' is string }}{{ 1 is string }}{{ x is not defined }}{{ 2 is not odd }}",
       "{}",
       "FalseTrueTrueFalseTrueTrueTrueFalseTrueTrue"},
      {"{{ 1 is lessthan 2 }}{{ 2 is greaterthan 1 }}{{ 1 is equalto 1 }}{{ 1 is le 1 }}{{ 1 is ge 2 }}{{ 1 is sameas 1 }}",
       "{}",
       "TrueTrueTrueTrueFalseTrue"},
  });
}

TEST(JinjaRender, For) {
  expect_renders({
      {"{% for x in [1,2,3] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}",
       "{}",
       "1032TrueFalse3;2121FalseFalse3;3210FalseTrue3;"},
      {"{% for x in [1,2,3] %}{{ loop.previtem }}-{{ loop.nextitem }}-{{ loop.cycle('a', 'b') }};{% endfor %}",
       "{}",
       "-2-a;1-3-b;2--a;"},
      {"{% for x in [1,2,3] if x > 1 %}{{ x }}:{{ loop.index }}/{{ loop.length }} {% endfor %}",
       "{}",
       "2:1/2 3:2/2 "},
      {"{% for x in [] %}a{% else %}empty{% endfor %}|{% for x in missing %}a{% else %}none{% endfor %}|{% for x in [1] if false %}a{% else %}filtered{% endfor %}",
       "{}",
       "empty|none|filtered"},
      {"{% for k in {'a': 1, 'b': 2} %}{{ k }}{% endfor %}|{% for c in 'héj' %}[{{ c }}]{% endfor %}",
       "{}",
       "ab|[h][é][j]"},
      {"{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}{% for a, b in [[1, 2], (3, 4)] %}{{ a + b }}{% endfor %}",
       "{}",
       "a=1;b=2;37"},
      {"{% for x in range(10) %}{% if x is odd %}{% continue %}{% endif %}{% if x > 6 %}{% break %}{% endif %}{{ x }}{% endfor %}",
       "{}",
       "0246"},
      {"{% for i in [1, 2] %}{% for j in [1, 2] %}{{ loop.index }}{{ i }}{{ j }} {% endfor %}{{ loop.index }};{% endfor %}",
       "{}",
       "111 212 1;121 222 2;"},
      {"{{ range(3)|list }}|{{ range(1, 10, 3)|list }}|{{ range(5, 0, -2)|list }}|{{ range(0)|list }}",
       "{}",
       "[0, 1, 2]|[1, 4, 7]|[5, 3, 1]|[]"},
  });
}

TEST(JinjaRender, Scope) {
  expect_renders({
      {"{% set x = 1 %}{% for i in [1, 2] %}{{ x }}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}",
       "{}",
       "12121"},
      {"{% for i in [1, 2] %}{% if i == 2 %}[{{ y }}]{% endif %}{% set y = i %}{% endfor %}[{{ y }}]",
       "{}",
       "[][]"},
      {"{% if true %}{% set z = 5 %}{% endif %}{{ z }}|{% set a, b = 1, 2 %}{{ a }}{{ b }}|{% set c = (3, 4) %}{{ c }}",
       "{}",
       "5|12|(3, 4)"},
      {"{% set ns = namespace(a=1, b='x') %}{% for i in [1, 2, 3] %}{% set ns.a = ns.a + i %}{% endfor %}{{ ns.a }}{{ ns.b }}|{{ ns }}",
       "{}",
       "7x|<Namespace {'a': 7, 'b': 'x'}>"},
      {"{% set ns = namespace() %}{% set ns.found = false %}{% for m in messages %}{% if m == 'b' %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.found }}",
       "{\"messages\": [\"a\", \"b\"]}",
       "True"},
      {"{% set messages = messages[1:] %}{{ messages|length }}",
       "{\"messages\": [1, 2, 3]}",
       "2"},
      {"{% set x %}{% set inner = 1 %}block {{ 2 + 2 }}{% endset %}[{{ x }}][{{ inner }}]|{% set y | upper %}shout{% endset %}{{ y }}",
       "{}",
       "[block 4][]|SHOUT"},
      {"{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]",
       "{}",
       "3[]"},
  });
}

TEST(JinjaRender, Macro) {
  expect_renders({
      {"{% macro m(a, b=2) %}{{ a }}-{{ b }}-{{ varargs }}-{{ kwargs }}{% endmacro %}{{ m(1) }}|{{ m(1, 3, 4) }}|{{ m(1, c=5) }}|{{ m(b=7, a=0) }}",
       "{}",
       "1-2-()-{}|1-3-(4,)-{}|1-2-()-{'c': 5}|0-7-()-{}"},
      {"{% macro m() %}{{ x }}{% endmacro %}{% set x = 1 %}{{ m() }}|{% macro n(a, b=a * 2) %}{{ b }}{% endmacro %}{{ n(3) }}|{% macro o(a) %}[{{ a }}]{% endmacro %}{{ o() }}",
       "{}",
       "1|6|[]"},
      {"{% macro m(a) %}[{{ caller(a) }}]{% endmacro %}{% call(x) m(5) %}got {{ x }}{% endcall %}|{% macro w() %}<{{ caller() }}>{% endmacro %}{% call w() %}in{% endcall %}",
       "{}",
       "[got 5]|<in>"},
      {"{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(4) }}|{% for i in [1, 2] %}{% macro g() %}{{ i }}{% endmacro %}{{ g() }}{% endfor %}",
       "{}",
       "4321|12"},
      {"{% macro render(c) %}{% if c is string %}{{ c }}{% else %}{% for p in c %}{{ p.text }}{% endfor %}{% endif %}{% endmacro %}{{ render('s')|trim }}|{{ render([{'text': 'a'}, {'text': 'b'}]) }}",
       "{}",
       "s|ab"},
      {"{% filter upper %}abc {{ 'd' }}{% endfilter %}|{% filter trim|upper %}  x  {% endfilter %}",
       "{}",
       "ABC D|X"},
  });
}

TEST(JinjaRender, Whitespace) {
  expect_renders({
      {"{% if true %}\nyes\n{% endif %}\nafter",
       "{}",
       "yes\nafter"},
      {"  {% if true %}\n  x\n  {% endif %}\n",
       "{}",
       "  x\n"},
      {"a  {%- if true -%}  b  {%- endif -%}  c",
       "{}",
       "abc"},
      {"a\n  {{- 'b' -}}\n  c",
       "{}",
       "abc"},
      {"  {%+ if true %}x{% endif %}|  {{ 'v' }}|{% if true +%}\nkeep{% endif %}",
       "{}",
       "  x|  v|\nkeep"},
      {"a {# note #} b\n  {# line #}\nc {#- tight -#} d",
       "{}",
       "a  b\ncd"},
      {"x{% raw %} {{ not }} {% if %}{% endraw %}y\n{% raw -%}  z  {%- endraw %}",
       "{}",
       "x {{ not }} {% if %}y\nz"},
      {"line1\r\nline2\rline3\n",
       "{}",
       "line1\nline2\nline3"},
      {"{% for x in [1, 2] %}\n  {{ x }}\n{% endfor %}\n",
       "{}",
       "  1\n  2\n"},
      {"\t {% set a = 1 %}\n{{ a }}{{ {'k': {'n': 1}}['k'] }}",
       "{}",
       "1{'n': 1}"},
  });
}

// Hugging Face's {% generation %} extension (transformers' AssistantTracker,
// a call block that renders its body), checked against Jinja2 3.1.6 with that
// extension added to the environment.
TEST(JinjaRender, GenerationBlock) {
  expect_renders({
      {"a{% generation %}b{% endgeneration %}c", "{}", "abc"},
      {"a\n{% generation %}\nb\n{% endgeneration %}\nc", "{}", "a\nb\nc"},
      {"a {%- generation -%} b {%- endgeneration -%} c", "{}", "abc"},
      {"   {% generation %}\n   x\n   {% endgeneration %}\ny\n", "{}", "   x\ny"},
      {"{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{{ loop.index }}"
       "{% endgeneration %}{% else %}[{{ m.content }}]{% endif %}{% endfor %}",
       "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", \"content\": \"yo\"}]}",
       "[hi]yo2"},
      {"{% generation %}{% set x = 1 %}{% endgeneration %}{{ x }}|{% set ns = namespace(v=0) %}{% generation %}"
       "{% set ns.v = 5 %}{% endgeneration %}{{ ns.v }}",
       "{}", "|5"},
      {"{% set x = 1 %}{% generation %}{{ x }}{% set x = 2 %}{{ x }}{% endgeneration %}{{ x }}", "{}", "121"},
      {"{% generation %}{% generation %}x{% endgeneration %}{% endgeneration %}", "{}", "x"},
      {"{% generation %}{% macro m() %}M{% endmacro %}{{ m() }}{% endgeneration %}|{{ generation }}", "{}", "M|"},
  });
}

TEST(JinjaRender, Filters) {
  expect_renders({
      {"{{ '  x '|trim }}|{{ 'xxaxx'|trim('x') }}|{{ 'hELLO wORLD'|capitalize }}|{{ 'hello world-wide (x)'|title }}|{{ \"they're\"|title }}|{{ 'Ab'|upper }}{{ 'Ab'|lower }}",
       "{}",
       "x|a|Hello world|Hello World-Wide (X)|They're|ABab"},
      {"{{ [3, 1, 2]|sort }}|{{ ['b', 'A', 'c']|sort }}|{{ ['b', 'A']|sort(case_sensitive=true) }}|{{ [1, 3, 2]|sort(reverse=true) }}|{{ [{'n': 2}, {'n': 1}]|sort(attribute='n') }}",
       "{}",
       "[1, 2, 3]|['A', 'b', 'c']|['A', 'b']|[3, 2, 1]|[{'n': 1}, {'n': 2}]"},
      {"{{ [3, 1, 2]|reverse|list }}|{{ 'abc'|reverse }}|{{ [1, 2, 1]|unique|list }}|{{ ['b', 'A', 'a']|unique|list }}|{{ 'ab'|list }}",
       "{}",
       "[2, 1, 3]|cba|[1, 2]|['b', 'A']|['a', 'b']"},
      {"{{ [1, 2]|join(',') }}|{{ [1, 2]|join }}|{{ [{'a': 'x'}, {'a': 'y'}]|join('-', attribute='a') }}|{{ [1, 2]|first }}|{{ [1, 2]|last }}|{{ 'abc'|first }}|{{ []|first }}",
       "{}",
       "1,2|12|x-y|1|2|a|"},
      {"{{ 3.7|int }}|{{ '4'|int }}|{{ ' 12 '|int }}|{{ 'x'|int }}|{{ 'x'|int(9) }}|{{ '3.9'|int }}|{{ '0x1A'|int(0, 16) }}|{{ 3|float }}|{{ '2.5'|float }}|{{ 'y'|float }}",
       "{}",
       "3|4|12|0|9|3|26|3.0|2.5|0.0"},
      {"{{ 2.5|round }}|{{ 3.5|round }}|{{ 3.14159|round(2) }}|{{ 2.675|round(2) }}|{{ 3.2|round(method='ceil') }}|{{ 3.8|round(method='floor') }}|{{ 7|round }}|{{ -3|abs }}|{{ -2.5|abs }}",
       "{}",
       "2.0|4.0|3.14|2.67|4.0|3.0|7|3|2.5"},
      {"{{ [1, 2]|length }}|{{ '日本'|length }}|{{ {'a': 1}|count }}|{{ missing|length }}|{{ none|string }}|{{ [1]|string }}|{{ 1|string ~ 2 }}",
       "{}",
       "2|2|1|0|None|[1]|12"},
      {"{{ x|default('d') }}|{{ ''|default('d') }}|{{ ''|default('d', true) }}|{{ none|d('z') }}|{{ none|d('z', true) }}|{{ 0|default(5) }}",
       "{}",
       "d||d|None|z|0"},
      {"{{ {'a': 1, 'b': [2]}|items|list }}|{% for k, v in {'x': 1}|items %}{{ k }}{{ v }}{% endfor %}|{{ missing|items|list }}|{{ {'b': 1, 'a': 2}|dictsort }}",
       "{}",
       "[('a', 1), ('b', [2])]|x1|[]|[('a', 2), ('b', 1)]"},
      {"{{ users|selectattr('active')|map(attribute='name')|join(',') }}|{{ users|rejectattr('active')|map(attribute='name')|list }}|{{ users|selectattr('name', 'equalto', 'b')|list|length }}",
       "{\"users\": [{\"name\": \"a\", \"active\": true}, {\"name\": \"b\", \"active\": false}, {\"name\": \"c\", \"active\": true}]}",
       "a,c|['b']|1"},
      {"{{ msgs|selectattr('tool_calls', 'defined')|list|length }}|{{ msgs|rejectattr('tool_calls', 'defined')|map(attribute='role')|list }}|{{ msgs|map(attribute='missing', default='-')|join }}",
       "{\"msgs\": [{\"role\": \"user\"}, {\"role\": \"assistant\", \"tool_calls\": []}]}",
       "1|['user']|--"},
      {"{{ [1, 2, 3, 4]|select('odd')|list }}|{{ [1, 2, 3]|reject('odd')|list }}|{{ ['a', 'B']|map('upper')|list }}|{{ [1, 5, 3]|select('gt', 2)|list }}|{{ ['a', 'b']|map('replace', 'a', 'z')|join }}",
       "{}",
       "[1, 3]|[2]|['A', 'B']|[5, 3]|zb"},
      {"{{ 'abcb'|replace('b', 'x') }}|{{ 'aaa'|replace('a', 'b', 2) }}|{{ 'a b  c'|wordcount }}|{{ '<a href=\"x\">&\\'</a>'|e }}|{{ '<b>'|safe }}|{{ 5|safe ~ '' }}",
       "{}",
       "axcx|bba|3|&lt;a href=&#34;x&#34;&gt;&amp;&#39;&lt;/a&gt;|<b>|5"},
      {"{{ 'a\\nb\\n\\nc'|indent }}|{{ 'a\\nb'|indent(2, true) }}|{{ 'a\\n\\nb'|indent(1, blank=true) }}|{{ 'a\\nb'|indent('> ') }}",
       "{}",
       "a\n    b\n\n    c|  a\n  b|a\n \n b|a\n> b"},
      {"{{ [2, 5]|max }}|{{ ['b', 'A']|min }}|{{ [1, 2]|sum }}|{{ [{'v': 1}, {'v': 2}]|sum(attribute='v') }}|{{ [{'n': 3}, {'n': 9}]|max(attribute='n') }}",
       "{}",
       "5|A|3|3|{'n': 9}"},
      {"{{ '%s and %d'|format('a', 2) }}|{{ '%5.2f|%x|%r|%-3s|%03d' % (3.14159, 255, 'q', 'a', 7) }}|{{ '%(k)s!' % {'k': 'v'} }}|{{ '100%%' % () }}",
       "{}",
       "a and 2| 3.14|ff|'q'|a  |007|v!|100%"},
      {"{{ 'ab'|center(6) }}|{{ 'abc'|center(6) }}|{{ messages|attr('x') }}",
       "{\"messages\": {\"x\": 1}}",
       "  ab  | abc  |"},
  });
}

// Jinja2's select, reject, selectattr, rejectattr and map give nothing for a
// false subject (none, undefined, 0, '', []) without looking at their arguments.
TEST(JinjaRender, SelectAndMapOfNothing) {
  expect_renders({
      {"{{ none|selectattr('x')|list }}|{{ none|rejectattr('x')|list }}|{{ none|select|list }}|{{ "
       "none|reject('none')|list }}|{{ none|map('upper')|list }}|{{ none|map(attribute='x')|list }}",
       "{}", "[]|[]|[]|[]|[]|[]"},
      {"{{ x|selectattr('a', 'equalto', 1)|list }}|{{ x|map('upper')|list }}|{{ x|select|list }}|{{ "
       "none|selectattr('x')|first }}|{{ none|selectattr('x')|join(',') }}|{{ (none|select|list) == [] }}",
       "{}", "[]|[]|[]|||True"},
      {"{% for x in undefined_var|selectattr('a', 'equalto', 1) %}{{ x }}{% else %}empty{% endfor %}|{% for m in "
       "messages|selectattr('role', 'equalto', 'tool') %}{{ m }}{% else %}no tools{% endfor %}",
       "{\"messages\": null}", "empty|no tools"},
      {"{{ none|map|list }}|{{ none|map(foo=1)|list }}|{{ none|selectattr|list }}|{{ 0|select|list }}|{{ "
       "''|reject('odd')|list }}|{{ []|rejectattr|list }}|{{ false|map('upper')|list }}|{{ "
       "none|select('no_such_test')|list }}",
       "{}", "[]|[]|[]|[]|[]|[]|[]|[]"},
      {"{{ users|selectattr('active')|map(attribute='name')|join(',') }}|{{ (none|map(attribute='x')|list) + [1] }}|{{ "
       "'ab'|selectattr('x')|list }}",
       "{\"users\": null}", "|[1]|[]"},
  });
}

TEST(JinjaRender, Tojson) {
  expect_renders({
      {"{{ 'x\"\\\\'|tojson }}|{{ 1.0|tojson }}|{{ [1, 2]|tojson }}|{{ none|tojson }}|{{ true|tojson }}|{{ {'a': [1, {}], 'b': []}|tojson }}",
       "{}",
       "\"x\\\"\\\\\"|1.0|[1, 2]|null|true|{\"a\": [1, {}], \"b\": []}"},
      {"{{ 'é\\n\\t\\u0001'|tojson }}|{{ 'é🎉'|tojson(ensure_ascii=true) }}|{{ '<&>'|tojson }}",
       "{}",
       "\"é\\n\\t\\u0001\"|\"\\u00e9\\ud83c\\udf89\"|\"<&>\""},
      {"{{ {'a': [1, {}], 'b': []}|tojson(indent=2) }}|{{ {'b': 1, 'a': 2}|tojson(sort_keys=true, separators=(',', ':')) }}|{{ [1]|tojson(indent='\\t') }}",
       "{}",
       "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": []\n}|{\"a\":2,\"b\":1}|[\n\t1\n]"},
      {"{{ tool|tojson }}",
       "{\"tool\": {\"name\": \"get\", \"parameters\": {\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"number\"}}}, \"n\": 1.5, \"u\": \"日本\"}}",
       "{\"name\": \"get\", \"parameters\": {\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"number\"}}}, \"n\": 1.5, \"u\": \"日本\"}"},
  });
}

// Dict keys of any hashable type, as Python keeps them: printed with repr,
// 1, 1.0 and True one key (the first spelling stays), tojson writing them as
// json.dumps does.
TEST(JinjaRender, DictKeysThatAreNotStrings) {
  expect_renders({
      {"{% set d = {0: 0, 1: 512} %}{{ d }}|{{ d[0] }}|{{ d[1] }}|{{ d.get(1) }}|{{ d.get(2) }}|{{ d.get(2, 'x') }}|{{ "
       "1 in d }}|{{ 2 in d }}|{{ '1' in d }}|{{ d|tojson }}",
       "{}", "{0: 0, 1: 512}|0|512|512|None|x|True|False|False|{\"0\": 0, \"1\": 512}"},
      {"{% set d = {0: 0, 1: 512} %}{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for k in d %}{{ k + 1 "
       "}},{% endfor %}",
       "{}", "0=0;1=512;1,2,"},
      {"{{ {true: 'a'} }}|{{ {none: 1} }}|{{ {1.5: 'x'} }}|{{ {(1, 2): 'x'} }}|{{ {true: 'a'}|tojson }}|{{ {none: "
       "1}|tojson }}|{{ {1.5: 'x', false: 2}|tojson }}",
       "{}",
       "{True: 'a'}|{None: 1}|{1.5: 'x'}|{(1, 2): 'x'}|{\"true\": \"a\"}|{\"null\": 1}|{\"1.5\": \"x\", \"false\": 2}"},
      {"{{ {1: 'a'}[1.0] }}|{{ {1: 'a'}[true] }}|{{ {1: 'a', 1.0: 'b', true: 'c'} }}|{{ {true: 'a', 1: 'b'} }}|{{ "
       "{1.0: 'a'}[1] }}|{{ {1.0: 'a'} }}",
       "{}", "a|a|{1: 'c'}|{True: 'b'}|a|{1.0: 'a'}"},
      {"{{ {0: 'a'}['0'] }}|{{ {'0': 'a'}[0] }}|{{ {0: 'a'}[5] }}|{{ {0: 'a'}.x }}|{{ {0: 'a'}[[1]] }}|{{ {1: "
       "'a'}['1'] is defined }}|{{ {1: 'a'}[1] is defined }}",
       "{}", "|||||False|True"},
      {"{{ {2: 'b', 1: 'a'}|tojson(sort_keys=true) }}|{{ {10: 'b', 9: 'a'}|tojson(sort_keys=true) }}|{{ {true: 'b', 0: "
       "'a'}|tojson(sort_keys=true) }}|{{ {1: 'b', 'a': 'a'}|tojson }}|{{ {1: 'b', '1': 'a'}|tojson }}|{{ {1: "
       "'a'}|tojson(indent=2) }}",
       "{}",
       "{\"1\": \"a\", \"2\": \"b\"}|{\"9\": \"a\", \"10\": \"b\"}|{\"0\": \"a\", \"true\": \"b\"}|{\"1\": \"b\", "
       "\"a\": \"a\"}|{\"1\": \"b\", \"1\": \"a\"}|{\n  \"1\": \"a\"\n}"},
      {"{{ {2: 'b', 1: 'a'}|dictsort }}|{{ {2: 'b', 1: 'a'}|dictsort(by='value') }}|{{ {2: 'b', 1: 'a'}|items|list }}",
       "{}", "[(1, 'a'), (2, 'b')]|[(1, 'a'), (2, 'b')]|[(2, 'b'), (1, 'a')]"},
      {"{{ {0: 0, 1: 512} == {1: 512, 0: 0} }}|{{ {1: 0} == {1.0: 0} }}|{{ {1: 0} == {'1': 0} }}|{{ {0: "
       "'a'}.keys()|list }}|{{ {0: 'a'}.values()|list }}|{{ {0: 'a'}|list }}|{{ {0: 'a'}|length }}",
       "{}", "True|True|False|[0]|['a']|[0]|1"},
      {"{{ {0: 'a'}|string }}|{{ {0: 'a'} ~ '' }}|{{ [{0: 'a'}] }}|{% set ns = namespace({1: 'x'}) %}{{ ns }}", "{}",
       "{0: 'a'}|{0: 'a'}|[{0: 'a'}]|<Namespace {1: 'x'}>"},
      {"{{ {0.0: 'z'}[0] }}|{{ {-0.0: 'z'}[0] }}|{{ {2**62: 1} }}|{{ {1e20: 1} }}|{{ {1e20: 1}|tojson }}|{{ {(1, 2): "
       "3}[(1, 2)] }}|{{ (1, 2) in {(1, 2): 3} }}",
       "{}", "z|z|{4611686018427387904: 1}|{1e+20: 1}|{\"1e+20\": 1}|3|True"},
      {"{% set d = {1: 'a', 2: 'b'} %}{{ d|map('string')|list }}|{{ d|join(',') }}|{{ d|first }}|{{ d|max }}|{{ d|sort "
       "}}",
       "{}", "['1', '2']|1,2|1|2|[1, 2]"},
      // 14 keys: looked up through the hash index.
      {"{% set big = {0: 'a', 1: 'b', 2: 'c', 3: 'd', 4: 'e', 5: 'f', 6: 'g', 7: 'h', 8: 'i', 9: 'j', 'k': 10, (1, 2): "
       "11, none: 12, 2.5: 13} %}{{ big[9] }}{{ big[9.0] }}{{ big[true] }}{{ big.k }}{{ big[(1, 2)] }}{{ big[none] "
       "}}{{ big[2.5] }}|{{ 10 in big }}|{{ big|length }}",
       "{}", "jjb10111213|False|14"},
  });
}

TEST(JinjaRender, Methods) {
  expect_renders({
      {"{{ '  a b '.strip() }}|{{ 'xyaxy'.strip('yx') }}|{{ '\\n\\na\\n'.lstrip('\\n') }}|{{ 'a\\n\\n'.rstrip() }}|{{ '\\u3000a\\xa0'.strip() }}",
       "{}",
       "a b|a|a\n|a|a"},
      {"{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ 'a-b-c'.rsplit('-', 1) }}|{{ '  a b  c  '.split(None, 1) }}|{{ ''.split() }}|{{ ''.split(',') }}",
       "{}",
       "['a', 'b', '', 'c']|['a', 'b']|['a', 'b c']|['a-b', 'c']|['a', 'b  c  ']|[]|['']"},
      {"{{ 'abc'.startswith('ab') }}|{{ 'abc'.endswith(('x', 'c')) }}|{{ 'abc'.find('c') }}|{{ 'abc'.find('z') }}|{{ 'aXbX'.rfind('X') }}|{{ 'ééx'.find('x') }}|{{ 'abab'.count('ab') }}",
       "{}",
       "True|True|2|-1|3|2|2"},
      {"{{ 'ABC def'.lower() }}|{{ 'hello world'.title() }}|{{ \"they're bill's\".title() }}|{{ 'hELLO'.capitalize() }}|{{ 'ÉCOLE'.lower() }}|{{ 'ΑΒΓ'.lower() }}|{{ 'привет'.upper() }}",
       "{}",
       "abc def|Hello World|They'Re Bill'S|Hello|école|αβγ|ПРИВЕТ"},
      {"{{ 'a-b'.replace('-', '+') }}|{{ 'aaa'.replace('a', 'b', 1) }}|{{ ', '.join(['x', 'y']) }}|{{ '{} and {}'.format(1, 'b') }}|{{ '{0}{0}{name}'.format('x', name='n') }}|{{ 'a\\nb\\r\\nc'.splitlines() }}",
       "{}",
       "a+b|baa|x, y|1 and b|xxn|['a', 'b', 'c']"},
      {"{{ '12'.isdigit() }}{{ 'ab'.isalpha() }}{{ 'a1'.isalnum() }}{{ ' '.isspace() }}{{ 'ab'.islower() }}{{ 'AB'.isupper() }}{{ ''.isdigit() }}",
       "{}",
       "TrueTrueTrueTrueTrueTrueFalse"},
      {"{{ d.get('a') }}|{{ d.get('z') }}|{{ d.get('z', 2) }}|{{ d.keys()|list }}|{{ d.values()|list }}|{% for k, v in d.items() %}{{ k }}{{ v }}{% endfor %}|{{ d.items|string == '' }}",
       "{\"d\": {\"a\": 1, \"b\": 2}}",
       "1|None|2|['a', 'b']|[1, 2]|a1b2|False"},
      {"{{ [1, 2, 1].count(1) }}|{{ [1, 2].index(2) }}|{{ {'items': 5}['items'] }}",
       "{}",
       "2|1|5"},
  });
}

TEST(JinjaRender, Globals) {
  expect_renders({
      {"{{ dict(a=1, b='x') }}|{{ namespace(a=1).a }}|{{ namespace({'k': 2}).k }}|{{ strftime_now('%d %b %Y') }}",
       "{}",
       "{'a': 1, 'b': 'x'}|1|2|22 Nov 2026"},
  });
}

TEST(JinjaRenderErrors, Raise) {
  expect_errors({
      {"{{ raise_exception('No messages provided.') }}", "{}", "No messages provided."},
  });
}

TEST(JinjaRenderErrors, Undefined) {
  expect_errors({
      {"{{ foo.bar }}", "{}", "'foo' is undefined"},
      {"{{ foo + 1 }}", "{}", "'foo' is undefined"},
      {"{{ foo() }}", "{}", "'foo' is undefined"},
      {"{{ foo[0] }}", "{}", "'foo' is undefined"},
  });
}

TEST(JinjaRenderErrors, Type) {
  expect_errors({
      {"{{ 'a' + 1 }}", "{}", "can only concatenate str (not \"int\") to str"},
      {"{{ 1 < 'a' }}", "{}", "'<' not supported between instances of 'int' and 'str'"},
      {"{{ 10 / 0 }}", "{}", "division by zero"},
      {"{{ 5 // 0 }}", "{}", "integer division or modulo by zero"},
      {"{{ missing|tojson }}", "{}", "Object of type Undefined is not JSON serializable"},
      {"{{ 1 in none }}", "{}", "argument of type 'NoneType' is not iterable"},
  });
}

TEST(JinjaRenderErrors, SelectAndMapOfATrueNonIterable) {
  expect_errors({
      {"{{ 5|selectattr('x')|list }}", "{}", "'int' object is not iterable"},
      {"{{ true|select|list }}", "{}", "'bool' object is not iterable"},
      {"{{ 5|map('upper')|list }}", "{}", "'int' object is not iterable"},
  });
}

TEST(JinjaRenderErrors, DictKeys) {
  expect_errors({
      {"{{ {[1]: 'x'} }}", "{}", "unhashable type: 'list'"},
      {"{{ {{}: 'x'} }}", "{}", "unhashable type: 'dict'"},
      {"{{ {(1, [2]): 3} }}", "{}", "unhashable type: 'list'"},
      {"{{ [1] in {0: 'a'} }}", "{}", "unhashable type: 'list'"},
      {"{{ {0: 'a'}.get([1]) }}", "{}", "unhashable type: 'list'"},
      {"{{ {0: 'a'}[5].y }}", "{}", "dict object has no element 5"},
      {"{{ {(1, 2): 'x'}|tojson }}", "{}", "keys must be str, int, float, bool or None, not tuple"},
      {"{{ {1: 'a'}|tojson(sort_keys=true) }}{{ {1: 'b', 'a': 'a'}|tojson(sort_keys=true) }}", "{}",
       "'<' not supported between instances of 'str' and 'int'"},
  });
}

TEST(JinjaRenderErrors, Sandbox) {
  expect_errors({
      {"{% set x = [1] %}{{ x.append(2) }}", "{}", "access to attribute 'append' of 'list' object is unsafe."},
      {"{% set d = {'a': 1} %}{{ d.update({'b': 2}) }}", "{}", "access to attribute 'update' of 'dict' object is unsafe."},
      {"{{ range(100001)|length }}", "{}", "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000)."},
  });
}

TEST(JinjaRenderErrors, Namespace) {
  expect_errors({
      {"{% set x = 1 %}{% set x.a = 2 %}", "{}", "cannot assign attribute on non-namespace object"},
  });
}
}  // namespace
