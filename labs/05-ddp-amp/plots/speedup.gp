# speedup.gp — lab 05: the three ways to synchronise gradients, projected.
# Left: speedup over one GPU against the number of GPUs, and the ideal.
# Right: one step at the most GPUs projected, split into compute (what
# backward and the optimizer take, the same in every mode) and the
# communication nothing hid (exposed): the lab's point in one bar per mode.
# Variables: data (projection.csv: per rank count each mode's speedup, its
# exposed share and its step in ms), profile.
stats data using "ranks" name "R" nooutput
# the row of the most GPUs, read into variables as stats passes it
bs = be = fs = fe = ps = pe = bms = fms = pms = NaN
last_row(dummy) = (bs = column("bucketed"), be = column("bucketed_exposed"), fs = column("ddp_flat"), \
                   fe = column("flat_exposed"), ps = column("per_param"), pe = column("per_param_exposed"), \
                   bms = column("bucketed_step_ms"), fms = column("flat_step_ms"), pms = column("per_param_step_ms"), 0)
stats data using (column("ranks") == R_max ? last_row(0) : 0) name "ROW" nooutput
set multiplot title sprintf("Lab 05: the three ways to synchronise gradients, projected on %s\n%s", profile, \
    sub("exposed: the part of the step spent waiting for communication that backward did not hide"))

# ---- left: speedup against GPUs ----
set origin 0, 0
set size 0.5, 0.9
eval key_below(1) # the bottom margin the right panel's key needs, on both
set xlabel 'GPUs (per-rank batch fixed)'
set ylabel 'speedup over one GPU'
set xtics (1, 2, 4)
set mxtics 1
set xrange [0.8:R_max + 0.2]
set yrange [0:R_max + 1.3]
set key inside top left noopaque nobox reverse Left samplen 1.5
plot x with lines dt 2 lc rgb "gray" title 'ideal', \
     data using "ranks":"bucketed" with linespoints ls 1 pt 7 ps 1.2 title 'bucketed', \
     data using "ranks":"ddp_flat" with linespoints ls 2 pt 5 ps 1.2 title 'ddp-flat', \
     data using "ranks":"per_param" with linespoints ls 3 pt 9 ps 1.4 title 'per-param'

# ---- right: one step at the most GPUs, compute and exposed communication ----
set origin 0.5, 0
set size 0.5, 0.9
set title sprintf("one step on %d GPUs", R_max)
set xlabel ''
set ylabel 'projected step (ms)'
unset logscale
set xrange [-0.6:2.6]
top = bms > fms ? (bms > pms ? bms : pms) : (fms > pms ? fms : pms)
set yrange [0:top * 1.35]
set xtics ("bucketed" 0, "ddp-flat" 1, "per-param" 2) scale 0
set style fill solid 1.0 border lc rgb '#333333'
set boxwidth 0.6
eval key_below(1)
set key maxrows 1 samplen 1.5
set lmargin 9
$bars << EOD
i n
0 1
1 2
2 3
EOD
ms(i) = i == 0 ? bms : i == 1 ? fms : pms
ex(i) = i == 0 ? be : i == 1 ? fe : pe
sp(i) = i == 0 ? bs : i == 1 ? fs : ps
plot $bars using 1:(ms($1)) with boxes fc rgb '#D55E00' title 'exposed communication', \
     $bars using 1:(ms($1) * (1 - ex($1))) with boxes fc rgb '#bbbbbb' title 'compute', \
     $bars using 1:(ms($1)):(sprintf("%.2f×\n%.1f%%", sp($1), 100 * ex($1))) with labels offset 0, 1.6 notitle
unset multiplot
