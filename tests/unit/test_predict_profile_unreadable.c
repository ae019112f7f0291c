/* SGC_PREDICT_PROFILE naming a file that cannot be read (CMake sets it):
 * a warning, then the built-in profile fitted to this process as without
 * the setting, its CPUs the ones this process may use.  Before, that
 * path alone kept the built-in 16 CPUs, so SGC_MARKERS=auto priced every
 * GC thread up to 16 as a pre-woken one on any machine. */
#include <unistd.h>

#include "common.h"
#include "mark/predict.h"
#include "unit.h"

int main(void) {
  const char *path = getenv("SGC_PREDICT_PROFILE");
  CHECK(path && access(path, R_OK) != 0, "run with SGC_PREDICT_PROFILE naming an unreadable file");
  GC_INIT();
  /* The built-in profile's own 16 CPUs would pass unfitted. */
  if (sgc_settings.usable_cpus == 16) {
    printf("16 usable CPUs, as the built-in profile: skipped\n");
    return 77;
  }
  const struct predict_profile *p = predict_profile();
  CHECK(p->cpus == sgc_settings.usable_cpus, "the profile has %u CPUs, the process %u", p->cpus,
        sgc_settings.usable_cpus);
  return unit_finish();
}
