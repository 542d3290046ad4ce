// `dtype-lint run [options] -- program args...`: runs a program under the
// runtime hooks, passing its stdio and exit code through, and reports.
#pragma once

namespace dtype_lint::runtime {

int runUnderHooks(int argc, char** argv);

}  // namespace dtype_lint::runtime
