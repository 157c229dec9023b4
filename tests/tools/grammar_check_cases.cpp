// Every case of tests/data/gbnf_cases.txt and json_schema_cases.txt through
// `peak grammar check`: the verdicts it prints, one per text, are those the
// case files give; a broken grammar ends it with status 1 and a message naming
// the line and column. The cases come as the list that
// tests/sampling/write_grammar_case_list.cpp writes (format there), whose
// texts are escaped as `peak grammar check -e` reads them.
//
//   grammar_check_cases PEAK CASE_DIR
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Case {
  int line = 0;  // in the list
  std::string expected;
  std::string rest;  // the text, or an error's LINE:COLUMN WORDS
};

// The cases of one grammar or schema file, consecutive in the list.
struct Group {
  std::string file;
  std::string root;
  std::vector<Case> cases;
};

std::vector<Group> read_groups(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<Group> groups;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream words(line);
    Group g;
    Case c;
    words >> g.file >> g.root >> c.expected;
    c.line = number;
    const size_t text_at = static_cast<size_t>(words.tellg());
    c.rest = text_at < line.size() ? line.substr(text_at + 1) : "";
    if (groups.empty() || groups.back().file != g.file || c.expected == "error") groups.push_back(g);
    groups.back().cases.push_back(c);
  }
  return groups;
}

// Runs a shell command; its output (stdout and stderr) and exit status.
std::string run(const std::string& command, int* status) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return (*status = -1), output;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) output.append(buf, n);
  const int raw = pclose(pipe);
  *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return output;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string check_command(const std::string& peak, const std::string& dir, const Group& g) {
  const bool schema = g.file.size() > 5 && g.file.compare(g.file.size() - 5, 5, ".json") == 0;
  std::string command = quoted(peak) + " grammar check " + (schema ? "--json-schema-file " : "--grammar-file ") +
                        quoted(dir + "/" + g.file);
  if (!schema) command += " --grammar-root " + g.root;
  return command;
}

// A broken grammar: status 1, the line and column and the words in the message.
int check_error(const std::string& command, const Case& c) {
  int status = 0;
  const std::string output = run(command + " x", &status);
  const std::string where = c.rest.substr(0, c.rest.find(' '));
  const std::string words = c.rest.substr(where.size() + 1);
  const std::string position =
      "line " + where.substr(0, where.find(':')) + ", column " + where.substr(where.find(':') + 1);
  if (status == 1 && output.find(position) != std::string::npos && output.find(words) != std::string::npos) return 0;
  std::cerr << "case " << c.line << ": wanted status 1, '" << position << "' and '" << words << "'; got status "
            << status << ": " << output;
  return 1;
}

bool verdict_matches(const std::string& expected, const std::string& printed) {
  if (expected == "incomplete") return printed == "prefix" || printed == "rejected";
  return printed == expected;
}

// The group's texts in one file, one run, one printed verdict per text.
int check_verdicts(const std::string& command, const std::string& work, const Group& g) {
  const std::string texts = work + "/" + g.file + ".texts";
  std::ofstream(texts, std::ios::binary) << [&] {
    std::string all;
    for (const Case& c : g.cases) all += c.rest + "\n";
    return all;
  }();
  int status = 0;
  std::istringstream output(run(command + " -e -f " + quoted(texts), &status));
  int failures = status == 0 ? 0 : 1;
  if (status != 0) std::cerr << g.file << ": exit status " << status << "\n";
  for (const Case& c : g.cases) {
    std::string printed;
    std::getline(output, printed);
    if (verdict_matches(c.expected, printed)) continue;
    std::cerr << "case " << c.line << " (" << g.file << "): expected " << c.expected << ", printed '" << printed
              << "' for " << c.rest << "\n";
    ++failures;
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: grammar_check_cases PEAK CASE_DIR\n";
    return 2;
  }
  const std::string dir = argv[2];
  const std::vector<Group> groups = read_groups(dir + "/grammar_cases.txt");
  int failures = 0;
  size_t cases = 0;
  for (const Group& g : groups) {
    const std::string command = check_command(argv[1], dir, g);
    failures +=
        g.cases.front().expected == "error" ? check_error(command, g.cases.front()) : check_verdicts(command, dir, g);
    cases += g.cases.size();
  }
  std::cout << cases << " cases, " << failures << " failures\n";
  return failures == 0 && cases >= 200 ? 0 : 1;
}
