//! Proxy costs: what stands in for a measured metric when only sequence lengths were logged.

use std::fmt;
use std::str::FromStr;

/// A cost computed from the key alone. For a two-length key, each length contributes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Cost {
    #[default]
    Linear,
    Quadratic,
    Power(f64),
}

impl Cost {
    pub fn exponent(self) -> f64 {
        match self {
            Cost::Linear => 1.0,
            Cost::Quadratic => 2.0,
            Cost::Power(p) => p,
        }
    }

    pub fn of_key(self, key: &[u32]) -> f64 {
        let p = self.exponent();
        key.iter().map(|&len| f64::from(len).powf(p)).sum()
    }

    /// The name of the metric column the proxy becomes, so outputs say it is a proxy.
    pub fn column_name(self) -> String {
        format!("proxy_cost({self})")
    }
}

impl fmt::Display for Cost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cost::Linear => write!(f, "linear"),
            Cost::Quadratic => write!(f, "quadratic"),
            Cost::Power(p) => write!(f, "power:{p}"),
        }
    }
}

impl FromStr for Cost {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "linear" => Ok(Cost::Linear),
            "quadratic" => Ok(Cost::Quadratic),
            other => match other.strip_prefix("power:").map(str::parse::<f64>) {
                Some(Ok(p)) if p.is_finite() && p > 0.0 => Ok(Cost::Power(p)),
                _ => Err(format!(
                    "unknown cost {s:?}; expected linear, quadratic or power:P with P > 0"
                )),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_by_hand() {
        assert_eq!(Cost::Linear.of_key(&[3, 4]), 7.0);
        assert_eq!(Cost::Quadratic.of_key(&[3, 4]), 25.0);
        assert_eq!("power:1.5".parse::<Cost>().unwrap().of_key(&[4]), 8.0);
        assert!("power:-1".parse::<Cost>().is_err());
        assert_eq!(Cost::Power(1.5).to_string(), "power:1.5");
    }
}
