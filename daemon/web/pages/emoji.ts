/**
 * `:name:` emoji in the pages' Markdown (GitLab renders Gemojione's names as pictures; the pages show the Unicode
 * character, no image to load). No emoji data package is installed, so this is the common part of the set by name
 * (the names award_emoji accepts: services/collaboration/emoji-names.ts); a name not here stays as typed.
 */
const TABLE = `
+1 👍 -1 👎 thumbsup 👍 thumbsdown 👎 smile 😄 smiley 😃 grinning 😀 grin 😁 laughing 😆 satisfied 😆 joy 😂 sweat_smile 😅
blush 😊 innocent 😇 wink 😉 relaxed ☺️ heart_eyes 😍 kissing_heart 😘 yum 😋 stuck_out_tongue 😛
stuck_out_tongue_winking_eye 😜 sunglasses 😎 smirk 😏 neutral_face 😐 expressionless 😑 unamused 😒 sweat 😓 pensive 😔
confused 😕 confounded 😖 disappointed 😞 worried 😟 angry 😠 rage 😡 cry 😢 sob 😭 persevere 😣 triumph 😤
disappointed_relieved 😥 fearful 😨 weary 😩 sleepy 😪 tired_face 😫 scream 😱 astonished 😲 flushed 😳 sleeping 😴
dizzy_face 😵 mask 😷 open_mouth 😮 hushed 😯 thinking 🤔 slight_smile 🙂 upside_down 🙃 rolling_eyes 🙄 nerd 🤓
heart ❤️ broken_heart 💔 blue_heart 💙 green_heart 💚 yellow_heart 💛 purple_heart 💜 sparkling_heart 💖
star ⭐ star2 🌟 sparkles ✨ zap ⚡ fire 🔥 boom 💥 collision 💥 tada 🎉 confetti_ball 🎊 balloon 🎈 gift 🎁 trophy 🏆
medal 🏅 rocket 🚀 bulb 💡 bug 🐛 beetle 🐞 ant 🐜 bee 🐝 snail 🐌 turtle 🐢 snake 🐍 octopus 🐙 whale 🐳 dolphin 🐬
cat 🐱 dog 🐶 mouse 🐭 rabbit 🐰 fox 🦊 bear 🐻 panda_face 🐼 koala 🐨 tiger 🐯 lion_face 🦁 cow 🐮 pig 🐷 frog 🐸
monkey 🐒 see_no_evil 🙈 hear_no_evil 🙉 speak_no_evil 🙊 chicken 🐔 penguin 🐧 bird 🐦 unicorn 🦄
apple 🍎 banana 🍌 cherries 🍒 grapes 🍇 lemon 🍋 pizza 🍕 hamburger 🍔 fries 🍟 cake 🍰 cookie 🍪 coffee ☕ tea 🍵
beer 🍺 beers 🍻 wine_glass 🍷 sun_with_face 🌞 sunny ☀️ cloud ☁️ umbrella ☔ snowflake ❄️ rainbow 🌈 earth_americas 🌎
warning ⚠️ no_entry ⛔ no_entry_sign 🚫 x ❌ heavy_check_mark ✔️ white_check_mark ✅ ballot_box_with_check ☑️
heavy_multiplication_x ✖️ question ❓ exclamation ❗ grey_question ❔ bangbang ‼️ 100 💯 ok_hand 👌 wave 👋 clap 👏
raised_hands 🙌 pray 🙏 muscle 💪 point_up ☝️ point_right 👉 point_left 👈 point_down 👇 v ✌️ punch 👊 fist ✊
hand ✋ raised_hand ✋ eyes 👀 skull 💀 ghost 👻 alien 👽 robot 🤖 poop 💩 hankey 💩 shit 💩 lock 🔒 unlock 🔓 key 🔑
hammer 🔨 wrench 🔧 gear ⚙️ link 🔗 paperclip 📎 pushpin 📌 memo 📝 pencil 📝 pencil2 ✏️ book 📖 books 📚
calendar 📆 date 📅 clock1 🕐 hourglass ⌛ alarm_clock ⏰ watch ⌚ computer 💻 iphone 📱 phone ☎️ email 📧 envelope ✉️
mailbox 📫 package 📦 moneybag 💰 dollar 💵 chart_with_upwards_trend 📈 chart_with_downwards_trend 📉 bar_chart 📊
mag 🔍 mag_right 🔎 bell 🔔 no_bell 🔕 speech_balloon 💬 thought_balloon 💭 zzz 💤 construction 🚧 rotating_light 🚨
checkered_flag 🏁 triangular_flag_on_post 🚩 house 🏠 office 🏢 car 🚗 bike 🚲 airplane ✈️ ship 🚢 train 🚋
arrow_up ⬆️ arrow_down ⬇️ arrow_left ⬅️ arrow_right ➡️ recycle ♻️ copyright ©️ registered ®️ tm ™️ information_source ℹ️
`;

const EMOJI: ReadonlyMap<string, string> = (() => {
  const words = TABLE.split(/\s+/).filter(Boolean);
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < words.length; i += 2) map.set(words[i]!, words[i + 1]!);
  return map;
})();

/** The character of an emoji name, or undefined. */
export const emojiOf = (name: string) => EMOJI.get(name);

/** A text with every known `:name:` replaced by its character. */
export const replaceEmoji = (text: string) => text.replace(/:([a-z0-9_+-]{1,40}):/g, (m, name: string) => EMOJI.get(name) ?? m);
