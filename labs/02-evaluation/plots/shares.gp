# shares.gp — lab 02: how far each class's share of the training and the
# validation part drifts from its share of all the rows they were dealt from
# (the pool), in percentage points, for a random split (bars) and the
# stratified one (black marks). The shares themselves sit near each other
# (a tenth each on Fashion-MNIST): drawn as they are, the drift the plot
# exists to show would be a sliver. Variables: data (shares.csv).
drift(col) = 100 * (column(col) - column("pool"))
stats data using (abs(drift("random_train")) > abs(drift("random_val")) ? abs(drift("random_train")) \
                                                                       : abs(drift("random_val"))) name "R" nooutput
stats data using (abs(drift("stratified_train")) > abs(drift("stratified_val")) ? abs(drift("stratified_train")) \
                                                                               : abs(drift("stratified_val"))) \
    name "S" nooutput
set title sprintf("Each class's share of a part, minus its share of all the rows split\n%s", \
    sub(sprintf("random split: up to %.2f percentage points off; stratified: %s", R_max, \
        S_max < 0.005 ? "none (to 0.01 points)" : sprintf("up to %.2f points", S_max))))
w = 0.36
set style fill solid 0.85 border -1
set boxwidth w
set xtics rotate by -40 left nomirror
set xrange [-0.6:*]
set offsets 0, 0.6, 0, 0
set ylabel 'share of the part minus share of all (percentage points)'
lim = R_max > S_max ? R_max : S_max
lim = lim > 0.05 ? lim * 1.25 : 0.1
set yrange [-lim:lim]
set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lc rgb '#444444' front
eval key_below(2)
set key maxrows 2
plot data using 0:(NaN):xtic(1) notitle, \
     data using (column(0) - w / 2):(drift("random_train")) with boxes ls 5 title 'random split: train', \
     data using (column(0) + w / 2):(drift("random_val")) with boxes ls 2 title 'random split: val', \
     data using (column(0) - w / 2):(drift("stratified_train")) with points pt 13 ps 1.3 lc rgb '#000000' \
          title 'stratified split: train', \
     data using (column(0) + w / 2):(drift("stratified_val")) with points pt 5 ps 1.1 lc rgb '#000000' \
          title 'stratified split: val'
