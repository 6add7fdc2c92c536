// Normalizations, reductions with run-time axes, Resize with run-time targets.
#include <gtest/gtest.h>
