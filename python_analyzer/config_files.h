// Configuration files a Python program loads (`json.load(open("conf/x.json"))`,
// `yaml.safe_load(f)`): their top-level scalars, the defaults of the settings
// the program reads from them.
#pragma once

#include <string>

#include "values.h"

namespace dtype_lint::python {

// A Dict of the file's top-level keys and scalar values (Bool, Number,
// String, None; nested values unknown), marked as loaded from a config file
// (its path in text).
// `path` is found as given, or relative to `importer`'s directory or the two
// above it; a file not found or not parsed gives the same Dict, empty.
Value loadConfigFile(const std::string& path, const std::string& importer);

}  // namespace dtype_lint::python
