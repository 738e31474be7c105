"""The plot kinds a report can draw, by name (a spec's `report: {plots: [...]}` and `report --plots` take
these). Kept apart from plots.py so that checking a name needs no plotting library; plots.PLOT_KINDS maps
each name to its function, and a test keeps the two equal."""

PLOT_NAMES = ("throughput_vs_size", "percent_of_baseline", "roofline", "bandwidth", "error_vs_k", "heatmap",
              "distribution", "architectures", "energy_vs_speed")
