# Writes OUTPUT: a C++ source that holds each docs/rules/*.md page as a string,
# for `dtype-lint --explain`. Run at build time: cmake -DPAGES_DIR=... -DOUTPUT=... -P
file(GLOB pages "${PAGES_DIR}/DL*.md")
list(SORT pages)
set(entries "")
foreach(page ${pages})
  get_filename_component(id "${page}" NAME_WE)
  file(READ "${page}" text)
  string(APPEND entries "    {\"${id}\", R\"dtype_lint_page(${text})dtype_lint_page\"},\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "// Generated from docs/rules/ by cmake/EmbedRulePages.cmake; do not edit.
#include \"rule_pages.h\"

#include <map>

namespace dtype_lint::cli {

std::string_view rulePage(std::string_view id) {
  static const std::map<std::string_view, std::string_view> pages{
${entries}  };
  auto page = pages.find(id);
  return page == pages.end() ? std::string_view() : page->second;
}

}  // namespace dtype_lint::cli
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
