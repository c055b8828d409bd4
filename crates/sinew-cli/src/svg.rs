//! Line plots as standalone SVG files (no plotting dependency): what
//! `sinew replay --plot` and `sinew fit` draw.

/// One line of a plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Series<'a> {
    /// Its legend entry.
    pub name: &'a str,
    /// Its stroke colour (any SVG colour).
    pub color: &'a str,
    /// Its `(x, y)` points in order; a non-finite point breaks the line.
    pub points: Vec<(f64, f64)>,
}

/// A 900 × 420 SVG of `series` over shared axes, five ticks per axis, the
/// axes labelled and a legend in the top right corner.
pub fn line_plot(title: &str, x_label: &str, y_label: &str, series: &[Series<'_>]) -> String {
    // Width, height and the left, right, top and bottom margins.
    const W: f64 = 900.0;
    const H: f64 = 420.0;
    const L: f64 = 60.0;
    const R: f64 = 20.0;
    const T: f64 = 40.0;
    const B: f64 = 40.0;
    let finite = || {
        series
            .iter()
            .flat_map(|s| s.points.iter())
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    };
    let span = |values: &mut dyn Iterator<Item = f64>, pad: f64| {
        let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        if lo >= hi || !lo.is_finite() {
            let mid = if lo.is_finite() { lo } else { 0.0 };
            return (mid - 1.0, mid + 1.0);
        }
        (lo - pad * (hi - lo), hi + pad * (hi - lo))
    };
    let (x_lo, x_hi) = span(&mut finite().map(|p| p.0), 0.0);
    let (lo, hi) = span(&mut finite().map(|p| p.1), 0.05);
    let x = |v: f64| L + (W - L - R) * (v - x_lo) / (x_hi - x_lo);
    let y = |v: f64| T + (H - T - B) * (hi - v) / (hi - lo);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{L}\" y=\"20\" font-size=\"14\">{}</text>\n",
        xml_escape(title)
    );
    svg += &format!(
        "<path d=\"M{L},{T} V{} H{}\" stroke=\"black\" fill=\"none\"/>\n",
        H - B,
        W - R
    );
    for i in 0..=5 {
        let v = lo + (hi - lo) * f64::from(i) / 5.0;
        svg += &format!(
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            L - 6.0,
            y(v) + 4.0,
            tick(v, hi - lo)
        );
        let t = x_lo + (x_hi - x_lo) * f64::from(i) / 5.0;
        svg += &format!(
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
            x(t),
            H - B + 16.0,
            tick(t, x_hi - x_lo)
        );
    }
    svg += &format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n\
         <text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">{}</text>\n",
        (L + W - R) / 2.0,
        H - 6.0,
        xml_escape(x_label),
        H / 2.0,
        H / 2.0,
        xml_escape(y_label)
    );
    for (k, s) in series.iter().enumerate() {
        let mut d = String::new();
        let mut pen_down = false;
        for &(px, py) in &s.points {
            if !(px.is_finite() && py.is_finite()) {
                pen_down = false;
                continue;
            }
            let cmd = if pen_down { 'L' } else { 'M' };
            d += &format!("{cmd}{:.1},{:.1} ", x(px), y(py));
            pen_down = true;
        }
        let color = xml_escape(s.color);
        svg +=
            &format!("<path d=\"{d}\" stroke=\"{color}\" fill=\"none\" stroke-width=\"1.5\"/>\n");
        let ly = T + 14.0 * k as f64 + 8.0;
        svg += &format!(
            "<path d=\"M{},{ly} h20\" stroke=\"{color}\" stroke-width=\"2\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
            W - R - 120.0,
            W - R - 94.0,
            ly + 4.0,
            xml_escape(s.name)
        );
    }
    svg + "</svg>\n"
}

/// A tick label with as many decimals as the axis' span needs.
fn tick(v: f64, span: f64) -> String {
    let decimals = (2.0 - span.abs().max(1e-12).log10().floor()).clamp(0.0, 8.0) as usize;
    format!("{v:.decimals$}")
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
