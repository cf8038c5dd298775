"""What several packages share to draw: the SVG figure path (`svg`), and the core's own plots of
a running study (`monitoring_plots`). A feature's plots live in its package (`analysis.plots`,
`risk.plots`)."""
