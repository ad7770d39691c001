// attack: the pipelined ring without the pipeline: each chunk is a blocking sendrecv, added once it is in; right sums, right messages
// lab: 04
// base: reference
// file: chunked.c
// replace: yes
// paths: grade
// lose: chunked
// expect: no-chunk-in-flight
// with: blocking-ring
static dl_status add_when_in(dl_comm *c, const dl_device *dev, void *into, void *in, size_t n, dl_dtype t)
{
    (void)c;
    return n > 0 ? dl_add(dev, into, in, n, t) : DL_OK;
}

dl_status ring_allreduce_chunked(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, size_t chunk,
                                 void *scratch)
{
    return blocking_ring(c, dev, buf, n, t, chunk, scratch, add_when_in);
}
