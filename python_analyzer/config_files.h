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
// An INI file as configparser reads it: a Dict of its sections, each a Dict
// of its keys and string values (named "section" in its settings). Not found:
// an empty Dict.
Value loadIniFile(const std::string& path, const std::string& importer);
// A section of a configuration file the program reads keys from: a Dict named
// "section" whose keys are settings "section.key in PATH".
Value configSection(const std::string& path, const std::string& name);

}  // namespace dtype_lint::python
