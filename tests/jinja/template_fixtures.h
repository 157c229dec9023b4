// The chat-template fixtures of ../shared/fixtures/templates, for the tests of
// the jinja layer and of the layers above it: 13 real templates, conversations
// (cases.json) and Jinja2's renders of every template x conversation
// (expected.json), with the clock those renders were made at.
#pragma once

#include <string>

#include "jinja/value.h"

namespace peak::test {

// A whole file; throws std::runtime_error naming it when it cannot be read.
std::string read_file(const std::string& path);

std::string fixture_template(const std::string& name);  // <name>.jinja
// Member `key` of a fixture's dict; throws std::runtime_error naming it when absent.
const jinja::Value& fixture_field(const jinja::Value& dict, const char* key);
const jinja::Value& fixture_renders();                  // expected.json's "results", parsed once
const jinja::Value* fixture_case(const std::string& name);  // from cases.json; nullptr when absent
// Jinja2's render of one template x case (its "output"); a test failure when absent.
std::string fixture_render(const std::string& template_name, const std::string& case_name);

// strftime_now as the renders fixed it (22 Nov 2026), for the formats the
// templates use; another format is a test failure.
std::string fixture_clock(const std::string& format);

}  // namespace peak::test
