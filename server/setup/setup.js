// Posts the App manifest to GitHub as soon as the page loads; the page's
// button does the same when scripts are off.
"use strict";
const form = document.getElementById("manifest-form");
if (form && form.dataset.auto === "true") {
  form.submit();
}
