# memory.gp — lab 06: memory per rank by kind (parameters, gradients,
# momentum, activations, scratch), stacked, against the number of ranks, one
# panel per mode (the closed form, kit_mem_bytes), with the run's own
# ledger as a point in its mode's panel: only what a mode shards shrinks as
# ranks are added. At one rank FSDP holds more than DDP: its shard is then
# the whole model, and the layers it gathers whole (two at most, parameters
# and gradients) and its exchange's slots are copies on top of it.
# Variables: data (memory.csv: source, mode, ranks, params, grads, optim,
# acts, comm, total), P (the run's ranks), mode (its mode).
MiB = 1024.0 * 1024.0
stats data using (column("total") / MiB) name "TOT" nooutput
# the panels side by side, the key below them all (a panel's own key could
# be only as wide as the panel)
set multiplot title sprintf("Lab 06: memory per rank by kind (fp32, SGD with momentum); the point: this run, %s on %d rank(s)\n%s", mode, P, \
    sub("only what is sharded shrinks as ranks are added; at one rank FSDP's gathered layers come on top of a whole shard"))
set style fill solid 1.0 noborder
set boxwidth 0.75
set yrange [0:TOT_max * 1.08]
set xrange [-0.6:6.6]
set xtics ("1" 0, "" 1, "4" 2, "" 3, "16" 4, "" 5, "64" 6) scale 0
set grid noxtics

pos(r) = log(r) / log(2)
is(m) = strcol("mode") eq m && strcol("source") eq "model"
lo(k) = k == 0 ? 0 : k == 1 ? column("params") : k == 2 ? column("params") + column("grads") : \
        k == 3 ? column("params") + column("grads") + column("optim") : column("total") - column("comm")
hi(k) = k == 4 ? column("total") : lo(k + 1)
cols = "#0072B2 #D55E00 #009E73 #bbbbbb #E69F00"
names = "parameters gradients momentum activations scratch"
# panel m: the stack of mode m's rows; the key (once, below the panels) on the last
do for [m in "ddp zero1 fsdp"] {
    set title (m eq "ddp" ? "DDP" : m eq "zero1" ? "ZeRO-1" : "FSDP") offset 0, -0.4
    i = m eq "ddp" ? 0 : m eq "zero1" ? 1 : 2
    set lmargin at screen 0.10 + 0.295 * i
    set rmargin at screen 0.10 + 0.295 * i + 0.265
    set tmargin at screen 0.80
    set bmargin at screen 0.30
    if (m eq "zero1") { set xlabel "ranks, P" offset 0, 0.3 } else { unset xlabel }
    if (m eq "ddp") { set ylabel 'memory per rank (MiB)' } else { unset ylabel; set format y '' }
    unset key
    plot for [k = 0:4] data using (is(m) ? pos(column("ranks")) : NaN):((lo(k) + hi(k)) / 2 / MiB):(0.375):((hi(k) - lo(k)) / 2 / MiB) \
             with boxxyerror fc rgb word(cols, k + 1) title word(names, k + 1), \
         data using (strcol("source") eq "measured" && strcol("mode") eq m ? pos(column("ranks")) : NaN):(column("total") / MiB) \
             with points pt 7 ps 1.8 lc rgb 'black' title 'this run'
}
# the key: an empty plot across the bottom of the canvas (a panel's key is only as wide as its panel)
set origin 0, 0
set size 1, 0.12
unset title; unset xlabel; unset ylabel; unset border; unset tics; unset grid
set xrange [0:1]; set yrange [0:1]
set lmargin at screen 0; set rmargin at screen 1; set tmargin at screen 0.12; set bmargin at screen 0
set key at screen 0.5, screen 0.02 center bottom horizontal box opaque maxrows 1 samplen 1.2
plot for [k = 1:5] NaN with boxes fc rgb word(cols, k) title word(names, k), \
     NaN with points pt 7 ps 1.8 lc rgb 'black' title "this run's ledger (rank 0's peak)"
unset multiplot

