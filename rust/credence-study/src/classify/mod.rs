//! The classification study (issue 34): data sets with a stratified fixed test split
//! ([`data`]), seven methods on a softmax MLP that train once and predict at any inputs
//! ([`methods`]), graded shifts and out-of-distribution inputs of the test set ([`shift`]),
//! and the metrics of one job on one test set ([`score`]).
//!
//! Data flow as in the regression study: [`data::ClassDataset::load`] (pool, test set) ->
//! [`data::ClassRealization::draw_stratified`] (a stratified, standardised subsample) ->
//! [`methods::train_classifier`] -> [`methods::Classifier::predict`] (class probabilities per
//! pass) -> [`score::score_classes`].

pub mod data;
pub mod job;
pub mod methods;
pub mod run;
pub mod score;
pub mod shift;
pub mod table;
