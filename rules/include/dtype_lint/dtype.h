// The dtype lattice: LibTorch scalar types, sets of them after control-flow
// merges, and the numeric facts the rules need (range, precision, promotion).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dtype_lint {

// The scalar types a tensor can hold that the rules reason about.
enum class ScalarType : uint8_t {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Half,
  BFloat16,
  Float,
  Double,
  Count,
};

// "Half", "BFloat16", "Float", ... as LibTorch prints them without the c10:: prefix.
std::string_view name(ScalarType t);
// Accepts c10 enumerator names and aliases: "Half", "Float16", "kHalf", "Float32", "Long", ...
std::optional<ScalarType> scalarTypeFromName(std::string_view name);

bool isFloating(ScalarType t);
bool isLowPrecisionFloat(ScalarType t);  // Half or BFloat16
// Largest finite value of a floating type (65504 for Half).
double maxFinite(ScalarType t);
// Smallest positive subnormal of a floating type (5.96e-8 for Half).
double smallestSubnormal(ScalarType t);
// Smallest positive normal value of a floating type (6.10e-5 for Half).
double smallestNormal(ScalarType t);
// torch.promote_types for two tensor operands of the same dimension category.
ScalarType promote(ScalarType a, ScalarType b);

// A set of possible scalar types: the abstract value of one tensor's dtype.
// Empty is "no information yet" (bottom); all() is Unknown (top).
class DtypeSet {
 public:
  constexpr DtypeSet() = default;
  constexpr explicit DtypeSet(ScalarType t) : bits_(bit(t)) {}
  static constexpr DtypeSet unknown() { return DtypeSet(kAllBits); }

  bool isBottom() const { return bits_ == 0; }
  bool isUnknown() const { return bits_ == kAllBits; }
  // The single type when exactly one is possible.
  std::optional<ScalarType> single() const;
  bool contains(ScalarType t) const { return (bits_ & bit(t)) != 0; }
  bool allFloating() const;
  bool allLowPrecisionFloat() const;
  bool anyLowPrecisionFloat() const;

  DtypeSet join(DtypeSet other) const { return DtypeSet(uint16_t(bits_ | other.bits_)); }
  // The set of promote(a, b) over all pairs; bottom promotes as the other side.
  DtypeSet promoteWith(DtypeSet other) const;

  // "Half", "Half or Float", "unknown".
  std::string toString() const;

  friend bool operator==(DtypeSet a, DtypeSet b) { return a.bits_ == b.bits_; }
  friend bool operator!=(DtypeSet a, DtypeSet b) { return a.bits_ != b.bits_; }

 private:
  static constexpr uint16_t bit(ScalarType t) { return uint16_t(1u << unsigned(t)); }
  static constexpr uint16_t kAllBits = uint16_t((1u << unsigned(ScalarType::Count)) - 1);
  constexpr explicit DtypeSet(uint16_t bits) : bits_(bits) {}
  uint16_t bits_ = 0;
};

// True when every pair of floating types drawn from a and b differs: a
// mismatch on every path, not only on some.
bool definitelyDifferentFloating(DtypeSet a, DtypeSet b);

}  // namespace dtype_lint
