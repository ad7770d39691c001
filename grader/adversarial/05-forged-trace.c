// attack: the reference, calling the trace's recording functions itself (dl_trace_begin/end: the overlap proof is read from that trace)
// lab: 05
// base: reference
// file: reducer.c
// inject: ddp_finish
// lose: all
// status: references-outside-api
// expect: refused \[references-outside-api\].*dl_trace_(begin|end|on)
#include "dl/trace.h" // dl_trace_begin, dl_trace_end
static void ddplab_attack(void)
{
    if (!dl_trace_on())
        dl_trace_end(dl_trace_begin(DL_EV_ALLREDUCE, 0, 0, 1));
}
