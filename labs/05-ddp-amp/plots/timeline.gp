# timeline.gp — lab 05: one steady step on rank 0, compute above and
# communication below: where the allreduces ran while backward went on.
# Variables: data (timeline.csv: kind, id, t0_ms, t1_ms, lane), mode, P.
# kinds: 0 step, 1 forward, 2 backward (id = layer), 3 optimizer, 4 allreduce (id = bucket)
set title sprintf("Lab 05: one step of %s on rank 0 of %d (this machine's clock)", mode, P)
set xlabel 'time since the step began (ms)'
set ytics ("compute" 1, "communication" 0)
set yrange [-0.6:1.6]
set key outside bottom horizontal
set style fill solid 0.7 border -1
lane(k) = k == 4 ? 0 : 1
col(k) = k == 1 ? 1 : k == 2 ? 2 : k == 3 ? 4 : 3
plot data using (($3+$4)/2):(lane($1)):(($4-$3)/2):(0.3):(col($1)) every ::1 with boxxyerror lc variable notitle, \
     data using (($3+$4)/2):(lane($1)+0.45):(sprintf($1 == 2 ? "L%d" : $1 == 4 ? "B%d" : "", $2)) every ::1 with labels font ",8" notitle, \
     NaN with boxes lc 1 title 'forward', NaN with boxes lc 2 title 'backward (per layer)', \
     NaN with boxes lc 3 title 'allreduce (per bucket)', NaN with boxes lc 4 title 'optimizer'
