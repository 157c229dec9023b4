// Prints the Euclidean length of each line of comma-separated numbers in a
// file (the CSV of `peak embed`) as "%.4f", one per line, and its count of
// numbers before it: "384 1.0000". For embed_output.cmake, which cannot do
// floating-point arithmetic.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: vector_norms FILE.csv\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "vector_norms: cannot open %s\n", argv[1]);
    return 1;
  }
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string field;
    double sum = 0.0;
    size_t n = 0;
    while (std::getline(fields, field, ',')) {
      char* end = nullptr;
      const double v = std::strtod(field.c_str(), &end);
      if (end == field.c_str() || *end != '\0') {
        std::fprintf(stderr, "vector_norms: '%s' is not a number\n", field.c_str());
        return 1;
      }
      sum += v * v;
      ++n;
    }
    std::printf("%zu %.4f\n", n, std::sqrt(sum));
  }
  return 0;
}
