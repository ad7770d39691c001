# time.gp — lab 04: time per call against message size, log-log: flat where
# latency dominates (α), a slope of one where bandwidth does (β); the α–β
# model dashed over the whole range.
# Variables: as busbw.gp.
set title sprintf("Time per call, %d ranks, %s\n%s\n%s", P, dtype, \
    sub("left: a fixed cost per message (latency); right: time grows with bytes (bandwidth)"), \
    sub(sprintf("dashed: the model t = α + β·bytes, α fitted on %s, β on %s", small, large)))
eval bytes_axis('x')
# seconds on a decimal log axis, labelled in ns, µs, ms and s
time_label(t) = t >= 1 ? sprintf('%g s', t) : t >= 1e-3 ? sprintf('%g ms', t * 1e3) : \
                t >= 1e-6 ? sprintf('%g µs', t * 1e6) : sprintf('%g ns', t * 1e9)
set logscale y 10
set ytics ()
do for [e = -9:3] { set ytics add (time_label(10.0**e) 10.0**e) }
set xlabel 'message size per rank (bytes, log scale)'
set ylabel 'time per call (seconds, log scale)'
y = 'us'
yscale = 1e-6
load scripts.'/key.gp'
