// The owner of the test suites' precompiled gtest.h (tests/CMakeLists.txt):
// only its compile matters; it is never run.
int main() { return 0; }
