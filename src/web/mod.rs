//! Glue to the browser: the DOM, downloads, the address bar, the widget's
//! host and the theme.

pub mod address;
pub mod dom;
pub mod download;
pub mod host;
pub mod theme;
pub mod widget;
