// The chat page in Vue 3: the template (vue.html.tmpl) is compiled ahead,
// with hitl-prompt declared a custom element.
import { createApp } from "vue";
import { render } from "vue-render";

const el = document.getElementById("app");
createApp({ render, data: () => ({ ...el.dataset }) }).mount(el);
