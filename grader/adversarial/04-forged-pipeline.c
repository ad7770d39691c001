// attack: blocking sendrecv per chunk, with an empty isendrecv started before each add and waited after it, to look like a chunk in flight
// lab: 04
// base: reference
// file: chunked.c
// replace: yes
// paths: grade
// lose: chunked
// expect: no-chunk-in-flight
// with: blocking-ring
// "in flight" while the chunk is added: a request that moves nothing
static dl_status add_beside_decoy(dl_comm *c, const dl_device *dev, void *into, void *in, size_t n, dl_dtype t)
{
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    dl_comm_req *decoy = NULL;
    DL_TRY(dl_comm_isendrecv(c, in, 0, mod(r + 1, P), in, 0, mod(r - 1, P), t, &decoy));
    if (n > 0)
        DL_TRY(dl_add(dev, into, in, n, t));
    return dl_comm_wait(c, decoy);
}

dl_status ring_allreduce_chunked(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, size_t chunk,
                                 void *scratch)
{
    return blocking_ring(c, dev, buf, n, t, chunk, scratch, add_beside_decoy);
}
