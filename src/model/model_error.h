// Why a model is refused: it is malformed (a tensor is missing or has the wrong
// shape, hyper-parameters contradict each other), or it is valid but uses
// something peak does not run (another architecture, per-layer head counts ...).
#pragma once

#include <stdexcept>
#include <string>

namespace peak::model {

class InvalidModel : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class UnsupportedModel : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace peak::model
