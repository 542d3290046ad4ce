#include "dtype_lint/cache_directory.h"

#include <cstdlib>

namespace dtype_lint {

std::string defaultCacheDirectory() {
  if (const char* dir = std::getenv("DTYPE_LINT_CACHE_DIR"); dir && *dir) return dir;
  if (const char* dir = std::getenv("XDG_CACHE_HOME"); dir && *dir) return std::string(dir) + "/dtype-lint";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/dtype-lint";
  return "";
}

}  // namespace dtype_lint
