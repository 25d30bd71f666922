import { mount } from "svelte";
import Chat from "./Chat.svelte";

const el = document.getElementById("app");
mount(Chat, { target: el, props: { ...el.dataset } });
