# busbw.gp — lab 04: bus bandwidth against message size, one line per
# algorithm (points: measured), and the α–β model fitted to each, dashed,
# over the whole range of sizes. The key pairs each
# algorithm's measured busbw over the large messages with its fit.
# Variables: data (metrics.csv), model (fit.csv: nan where the model is not
# drawn), algos (space-separated names), P, dtype; per algorithm, in algos'
# order: meas (the busbw of the large messages' median time per byte, GB/s),
# alpha (µs), fitbw (the fit's busbw for large messages, GB/s); small, large
# (the sizes α and β were fitted on), shown, scripts (this folder).
set title sprintf("Bus bandwidth, %d ranks, %s\n%s\n%s", P, dtype, \
    sub("busbw = algbw × 2(P−1)/P (nccl-tests); key: the large messages' busbw (median)"), \
    sub(sprintf("dashed: the model t = α + β·bytes, α fitted on %s, β on %s", small, large)))
eval bytes_axis('x')
set xlabel 'message size per rank (bytes, log scale)'
set ylabel 'bus bandwidth (GB/s)'
set yrange [0:*]
y = 'busbw'
yscale = 1
load scripts.'/key.gp'
