// attack: none, an honest chunked-ring mistake that must cost the chunked item alone: each rank makes as many chunk calls as its own segments need, so with n < P a rank whose segments are empty makes fewer than its neighbours
// lab: 04
// base: mutant 04-empty-chunk-skipped
// file: chunked.c
// paths: grade
// lose: chunked
// expect: empty-call-skipped
