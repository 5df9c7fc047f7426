// Entry point of the cost-model unit tests (shardlab_cost_tests).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
