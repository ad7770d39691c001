# learning_curve.gp — lab 02: training loss per epoch for each lambda, one
# colour per lambda from green (small) to dark violet (large), on a log axis (the
# small-lambda curves end close together near its bottom).
# Variables: data (learning.csv), n (number of lambdas).
stats data using 1 name "E" nooutput
set title sprintf("Softmax regression: training loss per epoch\n%s", \
    sub("penalty included: the larger λ, the higher the floor"))
set xlabel 'epoch'
set ylabel 'training loss (cross-entropy + penalty, log scale)'
set logscale y
if (E_max <= 12) { set xtics 1; set mxtics 1 }
# one epoch: one point, centred (an x range of [1:1] is empty)
if (E_min == E_max) { set xrange [E_min - 0.5:E_max + 0.5] }
# viridis without its pale yellow end: every curve reads on white
set palette defined (0 '#7ad151', 0.33 '#22a884', 0.66 '#2a788e', 1 '#440154')
unset colorbox
set key outside right top vertical
shade(k) = n > 1 ? (k - 2.0) / (n - 1) : 0.5
# points only where there are few epochs to tell apart
if (E_max <= 30) {
    plot for [k=2:n+1] data using 1:k with linespoints lw 2 dt 1 pt 7 ps 0.6 lc palette frac shade(k) title columnhead(k)
} else {
    plot for [k=2:n+1] data using 1:k with lines lw 2 dt 1 lc palette frac shade(k) title columnhead(k)
}
