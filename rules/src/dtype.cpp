#include "dtype_lint/dtype.h"

#include <array>
#include <limits>

namespace dtype_lint {
namespace {

struct TypeFacts {
  std::string_view name;
  bool floating;
  int rank;  // position in the promotion order within its category
  double maxFinite;
  double smallestSubnormal;
  double smallestNormal;
};

constexpr std::array<TypeFacts, size_t(ScalarType::Count)> kFacts = {{
    {"Bool", false, 0, 1, 0, 0},
    {"Byte", false, 1, 255, 0, 0},
    {"Char", false, 1, 127, 0, 0},
    {"Short", false, 2, 32767, 0, 0},
    {"Int", false, 3, 2147483647.0, 0, 0},
    {"Long", false, 4, 9.2233720368547758e18, 0, 0},
    {"Half", true, 1, 65504.0, 5.9604644775390625e-08, 6.103515625e-05},
    {"BFloat16", true, 1, 3.3895313892515355e38, 9.183549615799121e-41, 1.1754943508222875e-38},
    {"Float", true, 2, std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
     std::numeric_limits<float>::min()},
    {"Double", true, 3, std::numeric_limits<double>::max(), std::numeric_limits<double>::denorm_min(),
     std::numeric_limits<double>::min()},
}};

const TypeFacts& facts(ScalarType t) { return kFacts[size_t(t)]; }

struct Alias {
  std::string_view alias;
  ScalarType type;
};
constexpr Alias kAliases[] = {
    {"Bool", ScalarType::Bool},     {"Byte", ScalarType::UInt8},        {"UInt8", ScalarType::UInt8},
    {"Char", ScalarType::Int8},     {"Int8", ScalarType::Int8},         {"Short", ScalarType::Int16},
    {"Int16", ScalarType::Int16},   {"Int", ScalarType::Int32},         {"Int32", ScalarType::Int32},
    {"Long", ScalarType::Int64},    {"Int64", ScalarType::Int64},       {"Half", ScalarType::Half},
    {"Float16", ScalarType::Half},  {"BFloat16", ScalarType::BFloat16}, {"Float", ScalarType::Float},
    {"Float32", ScalarType::Float}, {"Double", ScalarType::Double},     {"Float64", ScalarType::Double},
};

}  // namespace

std::string_view name(ScalarType t) { return facts(t).name; }

std::optional<ScalarType> scalarTypeFromName(std::string_view n) {
  if (n.size() > 1 && n[0] == 'k' && n[1] >= 'A' && n[1] <= 'Z') n.remove_prefix(1);
  for (const Alias& a : kAliases)
    if (a.alias == n) return a.type;
  return std::nullopt;
}

bool isFloating(ScalarType t) { return facts(t).floating; }
bool isLowPrecisionFloat(ScalarType t) { return t == ScalarType::Half || t == ScalarType::BFloat16; }
double maxFinite(ScalarType t) { return facts(t).maxFinite; }
double smallestSubnormal(ScalarType t) { return facts(t).smallestSubnormal; }
double smallestNormal(ScalarType t) { return facts(t).smallestNormal; }

ScalarType promote(ScalarType a, ScalarType b) {
  if (a == b) return a;
  const bool fa = isFloating(a), fb = isFloating(b);
  if (fa != fb) return fa ? a : b;  // floating wins over integral and bool
  // Half and BFloat16 have the same rank; together they promote to Float.
  if (fa && facts(a).rank == facts(b).rank) return ScalarType::Float;
  if (!fa) {
    if (a == ScalarType::Bool) return b;
    if (b == ScalarType::Bool) return a;
    // uint8 with a signed type of the same or lower width widens to the next signed type.
    if (a == ScalarType::UInt8 || b == ScalarType::UInt8) {
      ScalarType other = a == ScalarType::UInt8 ? b : a;
      return other == ScalarType::Int8 ? ScalarType::Int16 : other;
    }
  }
  return facts(a).rank > facts(b).rank ? a : b;
}

std::optional<ScalarType> DtypeSet::single() const {
  if (bits_ == 0 || (bits_ & (bits_ - 1)) != 0) return std::nullopt;
  for (unsigned i = 0; i < unsigned(ScalarType::Count); ++i)
    if (bits_ == bit(ScalarType(i))) return ScalarType(i);
  return std::nullopt;
}

template <typename Pred>
static bool allOf(uint16_t bits, Pred pred) {
  if (bits == 0) return false;
  for (unsigned i = 0; i < unsigned(ScalarType::Count); ++i)
    if ((bits & (1u << i)) && !pred(ScalarType(i))) return false;
  return true;
}

bool DtypeSet::allFloating() const { return allOf(bits_, isFloating); }
bool DtypeSet::allLowPrecisionFloat() const { return allOf(bits_, isLowPrecisionFloat); }
bool DtypeSet::anyLowPrecisionFloat() const { return contains(ScalarType::Half) || contains(ScalarType::BFloat16); }

DtypeSet DtypeSet::promoteWith(DtypeSet other) const {
  if (isUnknown() || other.isUnknown()) return unknown();
  // Bottom is no value (what a raising op returns): the other operand's dtype.
  if (isBottom()) return other;
  if (other.isBottom()) return *this;
  DtypeSet out;
  for (unsigned i = 0; i < unsigned(ScalarType::Count); ++i) {
    if (!contains(ScalarType(i))) continue;
    for (unsigned j = 0; j < unsigned(ScalarType::Count); ++j)
      if (other.contains(ScalarType(j))) out = out.join(DtypeSet(promote(ScalarType(i), ScalarType(j))));
  }
  return out;
}

std::string DtypeSet::toString() const {
  if (isUnknown() || isBottom()) return "unknown";
  std::string out;
  for (unsigned i = 0; i < unsigned(ScalarType::Count); ++i) {
    if (!contains(ScalarType(i))) continue;
    if (!out.empty()) out += " or ";
    out += name(ScalarType(i));
  }
  return out;
}

bool definitelyDifferentFloating(DtypeSet a, DtypeSet b) {
  if (!a.allFloating() || !b.allFloating()) return false;
  for (unsigned i = 0; i < unsigned(ScalarType::Count); ++i)
    if (a.contains(ScalarType(i)) && b.contains(ScalarType(i))) return false;
  return true;
}

}  // namespace dtype_lint
