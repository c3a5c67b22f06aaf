//! The JSON form of [`super::FitSummary`]'s maps: `(key, value)` pairs written and read as
//! objects in their order.

use serde::{Deserialize, Serialize};

/// `(key, value)` pairs written as a JSON object in their order.
pub(crate) struct OrderedMap<'a, T>(pub(crate) &'a [(String, T)]);

impl<T: Serialize> Serialize for OrderedMap<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// A JSON object read into `(key, value)` pairs in document order.
pub(crate) struct OrderedPairs<T>(pub(crate) Vec<(String, T)>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OrderedPairs<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visit<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visit<T> {
            type Value = OrderedPairs<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    out.push(entry);
                }
                Ok(OrderedPairs(out))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
    }
}

/// Serde for `Vec<(String, T)>` as a JSON object in order (nested R-hat by name).
pub(crate) mod by_name {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{OrderedMap, OrderedPairs};

    pub(crate) fn serialize<T: Serialize, S: Serializer>(v: &[(String, T)], s: S) -> Result<S::Ok, S::Error> {
        OrderedMap(v).serialize(s)
    }

    pub(crate) fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<(String, T)>, D::Error> {
        Ok(OrderedPairs::deserialize(d)?.0)
    }
}
