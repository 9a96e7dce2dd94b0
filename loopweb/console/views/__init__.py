"""The browser console's views: thin — parse the form, call a service or selector, render."""
