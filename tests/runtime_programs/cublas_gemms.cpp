// cuBLAS's callers linked into the program: the stand-in in the global scope.
extern "C" void callCublasGemms();

int main() { callCublasGemms(); }
