// attack: the reference ring, plus the kit's comm.c #included by a relative path with dl_comm_stats_get renamed, so that the submission's own dl_comm_stats_get stands in for the kit's traffic counters
// lab: 04
// base: reference
// file: ring.c
// lose: all
// status: includes-outside-files
// expect: refused \[includes-outside-files\].*common/src/comm\.c
#define dl_comm_stats_get ddplab_kit_stats_get
#include "../../common/src/comm.c"
#undef dl_comm_stats_get
void dl_comm_stats_get(const dl_comm *c, dl_comm_stats *s)
{
    ddplab_kit_stats_get(c, s);
}
