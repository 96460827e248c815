// Stand-ins for libschedsim_rl_plugin.so in the loader's tests (test_rl_plugin.cpp): one
// from another build of schedsim, and one without the entry point (FAKE_NO_ENTRY).
#include "rl/rl_plugin.hpp"

#ifdef FAKE_NO_ENTRY
extern "C" __attribute__((visibility("default"))) int not_the_entry_point() { return 0; }
#else
extern "C" __attribute__((visibility("default"))) const schedsim::rl::RlPluginApi* schedsim_rl_plugin_api() {
  static const schedsim::rl::RlPluginApi api{999, "0.0.0-other", schedsim::rl::RlPluginLayout{}, nullptr, nullptr, nullptr};
  return &api;
}
#endif
