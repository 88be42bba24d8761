/**
 * Synthetic clinical text for the demo: SOAP-style markdown notes and ambient transcripts built
 * from a small catalog of common primary-care visits. Entirely made up; no real patient data.
 */
import type { Random } from './random.js';

type Speaker = 'clinician' | 'patient';

interface VisitReason {
  readonly title: string;
  readonly complaint: string;
  readonly subjective: readonly string[];
  readonly objective: readonly string[];
  readonly assessment: string;
  readonly plan: readonly string[];
  readonly dialogue: readonly (readonly [Speaker, string])[];
}

const REASONS: readonly VisitReason[] = [
  {
    title: 'Hypertension follow-up',
    complaint: 'Blood pressure check',
    subjective: [
      'Home readings have mostly been in the 130s over 80s.',
      'Taking lisinopril daily; occasional missed evening dose.',
      'Denies chest pain, shortness of breath or headaches.',
    ],
    objective: ['Heart regular rate and rhythm, no murmurs.', 'No peripheral edema.'],
    assessment: 'Essential hypertension, improving on current therapy.',
    plan: [
      'Continue lisinopril 10 mg daily.',
      'Basic metabolic panel before next visit.',
      'Reduce sodium; walk 30 minutes most days.',
      'Follow up in 3 months.',
    ],
    dialogue: [
      ['clinician', 'How have your blood pressure readings been at home?'],
      ['patient', 'Mostly around 130 over 82, a bit higher when I forget the evening pill.'],
      ['clinician', 'Any headaches, chest pain or trouble breathing?'],
      ['patient', 'No, nothing like that.'],
      ['clinician', 'Your pressure today is better than last time. Let us keep the same dose.'],
      ['patient', 'Okay. Should I still check it every morning?'],
      ['clinician', 'A few times a week is enough. Bring the log next time.'],
    ],
  },
  {
    title: 'Type 2 diabetes review',
    complaint: 'Diabetes follow-up',
    subjective: [
      'Fasting glucose readings 120 to 150.',
      'Adherent to metformin; mild GI upset has settled.',
      'No polyuria, no numbness in the feet.',
    ],
    objective: ['Monofilament sensation intact bilaterally.', 'Feet without ulcers or calluses.'],
    assessment: 'Type 2 diabetes mellitus without complications, reasonably controlled.',
    plan: [
      'Continue metformin 1000 mg twice daily.',
      'HbA1c and lipid panel today.',
      'Annual retinal exam referral.',
      'Follow up in 3 months.',
    ],
    dialogue: [
      ['clinician', 'What have your sugars looked like in the mornings?'],
      ['patient', 'Between 120 and 150 most days.'],
      ['clinician', 'Is the metformin still bothering your stomach?'],
      ['patient', 'Not anymore, taking it with food helped.'],
      ['clinician', 'Any tingling or numbness in your feet?'],
      ['patient', 'No, they feel fine.'],
      ['clinician', 'Good. We will check your A1c today and I will send a referral for your eye exam.'],
    ],
  },
  {
    title: 'Acute low back pain',
    complaint: 'Low back pain for 5 days',
    subjective: [
      'Pain started after lifting boxes, worse with bending.',
      'No radiation below the knee, no numbness or weakness.',
      'No bladder or bowel changes, no fever.',
    ],
    objective: [
      'Paraspinal tenderness at L4-L5.',
      'Straight leg raise negative bilaterally.',
      'Strength 5/5 in lower extremities.',
    ],
    assessment: 'Acute mechanical low back pain without red flags.',
    plan: [
      'Ibuprofen 400 mg every 8 hours with food for up to 7 days.',
      'Stay active; heat as needed.',
      'Return if numbness, weakness or bladder changes.',
    ],
    dialogue: [
      ['clinician', 'Tell me about the back pain. When did it start?'],
      ['patient', 'Last Friday, after I moved some heavy boxes.'],
      ['clinician', 'Does the pain go down your leg at all?'],
      ['patient', 'No, it stays in the lower back.'],
      ['clinician', 'Any trouble controlling your bladder or bowels?'],
      ['patient', 'No.'],
      ['clinician', 'This looks like a muscle strain. Keep moving, and the anti-inflammatory should help.'],
    ],
  },
  {
    title: 'Upper respiratory infection',
    complaint: 'Cough and congestion for 4 days',
    subjective: [
      'Nasal congestion, sore throat and dry cough.',
      'Low-grade fever on the first day only.',
      'No shortness of breath.',
    ],
    objective: ['Oropharynx mildly erythematous, no exudate.', 'Lungs clear to auscultation bilaterally.'],
    assessment: 'Viral upper respiratory infection.',
    plan: [
      'Supportive care: fluids, rest, saline rinses.',
      'Honey or lozenges for cough.',
      'Return if fever returns or breathing worsens.',
    ],
    dialogue: [
      ['clinician', 'How long have you had the cough?'],
      ['patient', 'About four days. It started with a sore throat.'],
      ['clinician', 'Any fever or trouble breathing?'],
      ['patient', 'A little fever the first day, none since.'],
      [
        'clinician',
        'Your lungs sound clear. This is most likely a virus and should settle within a week or so.',
      ],
      ['patient', 'So no antibiotics?'],
      ['clinician', 'They would not help a virus. Fluids and rest are the best treatment.'],
    ],
  },
  {
    title: 'Annual wellness visit',
    complaint: 'Annual physical',
    subjective: ['No new concerns.', 'Exercises twice a week; non-smoker.', 'Sleeping about seven hours.'],
    objective: ['General exam unremarkable.', 'BMI within normal range.'],
    assessment: 'Routine adult health examination.',
    plan: [
      'Lipid panel and fasting glucose.',
      'Influenza vaccine given today.',
      'Age-appropriate cancer screening discussed.',
      'Return in 12 months.',
    ],
    dialogue: [
      ['clinician', 'Any new health concerns since last year?'],
      ['patient', 'Not really, I feel pretty good.'],
      ['clinician', 'How often are you exercising?'],
      ['patient', 'I go to the gym twice a week.'],
      ['clinician', 'That is great. We will do routine blood work and your flu shot today.'],
      ['patient', 'Sounds good.'],
    ],
  },
  {
    title: 'Anxiety follow-up',
    complaint: 'Follow-up for anxiety',
    subjective: [
      'Fewer panic episodes since starting therapy.',
      'Sleep improved; still worries about work.',
      'No thoughts of self-harm.',
    ],
    objective: ['Calm, good eye contact, linear thought process.'],
    assessment: 'Generalized anxiety disorder, improving.',
    plan: [
      'Continue sertraline 50 mg daily.',
      'Continue weekly cognitive behavioral therapy.',
      'Follow up in 6 weeks.',
    ],
    dialogue: [
      ['clinician', 'How have things been since we started the sertraline?'],
      ['patient', 'Better. I have had only one panic attack this month.'],
      ['clinician', 'And how is your sleep?'],
      ['patient', 'Much better, though work still keeps me up some nights.'],
      ['clinician', 'Any thoughts of hurting yourself?'],
      ['patient', 'No, none.'],
      ['clinician', 'I am glad it is helping. Let us keep the same dose and keep going with therapy.'],
    ],
  },
  {
    title: 'Knee pain',
    complaint: 'Right knee pain',
    subjective: [
      'Gradual onset over two months, worse on stairs.',
      'Morning stiffness under 30 minutes.',
      'No injury, no locking.',
    ],
    objective: ['Mild crepitus right knee, no effusion.', 'Full range of motion, ligaments stable.'],
    assessment: 'Probable osteoarthritis of the right knee.',
    plan: [
      'Topical diclofenac gel four times daily.',
      'Physical therapy referral for quadriceps strengthening.',
      'X-ray if not improving in 6 weeks.',
    ],
    dialogue: [
      ['clinician', 'Which knee is bothering you?'],
      ['patient', 'The right one, especially going down stairs.'],
      ['clinician', 'Did you injure it at any point?'],
      ['patient', 'No, it just slowly started hurting.'],
      ['clinician', 'Does it ever lock or give way?'],
      ['patient', 'No, it is just stiff in the morning.'],
      [
        'clinician',
        'This sounds like wear and tear. Strengthening exercises help a lot, so I will refer you to physical therapy.',
      ],
    ],
  },
  {
    title: 'Seasonal allergies',
    complaint: 'Sneezing and itchy eyes',
    subjective: ['Symptoms every spring, worse outdoors.', 'Over-the-counter antihistamine helps partially.'],
    objective: ['Pale, boggy nasal mucosa.', 'Mild conjunctival injection.'],
    assessment: 'Seasonal allergic rhinitis.',
    plan: [
      'Fluticasone nasal spray daily during season.',
      'Continue cetirizine as needed.',
      'Follow up as needed.',
    ],
    dialogue: [
      ['clinician', 'When do the allergy symptoms usually start?'],
      ['patient', 'Every spring, as soon as the trees bloom.'],
      ['clinician', 'Is the antihistamine helping?'],
      ['patient', 'Some, but my nose is still stuffed up.'],
      ['clinician', 'A steroid nose spray every day should help with the congestion.'],
    ],
  },
  {
    title: 'Headache evaluation',
    complaint: 'Recurrent headaches',
    subjective: [
      'Two to three headaches a week, band-like, late afternoon.',
      'Long screen hours; skipping lunch.',
      'No visual changes, no weakness.',
    ],
    objective: ['Neurological exam normal.', 'Mild trapezius tenderness.'],
    assessment: 'Tension-type headache.',
    plan: [
      'Regular meals and hydration; screen breaks.',
      'Acetaminophen as needed, no more than 10 days a month.',
      'Headache diary; follow up in 4 weeks.',
    ],
    dialogue: [
      ['clinician', 'How often are you getting the headaches?'],
      ['patient', 'Two or three times a week, usually late in the afternoon.'],
      ['clinician', 'Where do you feel them?'],
      ['patient', 'Like a tight band around my head.'],
      ['clinician', 'Any vision changes, weakness or numbness with them?'],
      ['patient', 'No, nothing like that.'],
      [
        'clinician',
        'These sound like tension headaches. Breaks from the screen and regular meals often help.',
      ],
    ],
  },
  {
    title: 'Medication review',
    complaint: 'Medication review',
    subjective: ['Taking five regular medications.', 'Occasional dizziness on standing.', 'No falls.'],
    objective: ['Orthostatic drop of 12 mmHg systolic.'],
    assessment: 'Polypharmacy with mild orthostatic hypotension.',
    plan: [
      'Reduce amlodipine to 5 mg daily.',
      'Rise slowly; increase fluids.',
      'Recheck blood pressure in 2 weeks.',
    ],
    dialogue: [
      ['clinician', 'Let us go through your medications one by one.'],
      ['patient', 'I brought the bottles with me.'],
      ['clinician', 'Have you felt dizzy when you stand up?'],
      ['patient', 'Sometimes, in the morning.'],
      [
        'clinician',
        'Your pressure drops a little when you stand, so I will lower one of the blood pressure pills.',
      ],
    ],
  },
];

const OPENERS: readonly (readonly [Speaker, string])[] = [
  ['clinician', 'Good morning, {first}. What brings you in today?'],
  ['clinician', 'Hi {first}, nice to see you again. How are you doing?'],
  ['clinician', 'Hello {first}, come on in and have a seat.'],
];
const CLOSERS: readonly (readonly [Speaker, string])[] = [
  ['clinician', 'Do you have any other questions for me today?'],
  ['patient', 'No, I think that covers it. Thank you.'],
  ['clinician', 'Take care, and call us if anything changes.'],
];

export interface VisitPlan {
  readonly reason: VisitReason;
  readonly vitals: string;
}

export function planVisit(random: Random): VisitPlan {
  const systolic = random.int(108, 152);
  const vitals =
    `BP ${systolic}/${random.int(64, Math.min(96, systolic - 30))} mmHg, HR ${random.int(58, 96)}, ` +
    `Temp ${(36.3 + random.next() * 1.1).toFixed(1)} °C, SpO2 ${random.int(95, 100)}%`;
  return { reason: random.pick(REASONS), vitals };
}

export function visitTitle(plan: VisitPlan): string {
  return plan.reason.title;
}

/** A SOAP note in markdown; `brief` keeps bulk-generated notes small. */
export function soapNote(plan: VisitPlan, random: Random, brief: boolean): string {
  const r = plan.reason;
  const subjective = brief
    ? r.subjective.slice(0, 1)
    : random.sample(r.subjective, Math.max(2, r.subjective.length - 1));
  const objective = brief ? [] : r.objective;
  const steps = brief ? r.plan.slice(0, 2) : r.plan;
  return [
    '## Subjective',
    `**Chief complaint:** ${r.complaint}.`,
    subjective.join(' '),
    '',
    '## Objective',
    `- Vitals: ${plan.vitals}`,
    ...objective.map((line) => `- ${line}`),
    '',
    '## Assessment',
    r.assessment,
    '',
    '## Plan',
    ...steps.map((line) => `- ${line}`),
  ].join('\n');
}

export interface Turn {
  speaker: Speaker;
  start: number;
  end: number;
  text: string;
}

/** Clinician/patient turns with speech-paced timings and the pauses of an exam. */
export function transcriptTurns(
  plan: VisitPlan,
  random: Random,
  firstName: string,
  brief: boolean,
): { turns: Turn[]; durationSeconds: number } {
  const opener = random.pick(OPENERS);
  const dialogue = brief ? plan.reason.dialogue.slice(0, 3) : plan.reason.dialogue;
  const closers = brief ? CLOSERS.slice(2) : CLOSERS;
  const lines = [[opener[0], opener[1].replace('{first}', firstName)] as const, ...dialogue, ...closers];
  const turns: Turn[] = [];
  let clock = round(random.float(0.5, 2.5));
  lines.forEach(([speaker, text], index) => {
    const words = text.split(' ').length;
    const spoken = words * random.float(0.32, 0.45) + 0.4;
    const start = clock;
    const end = round(start + spoken);
    turns.push({ speaker, start, end, text });
    // Mostly conversational gaps; once in a while the pause of an examination.
    const examPause = !brief && index === Math.floor(lines.length / 2);
    clock = round(end + (examPause ? random.float(40, 150) : random.float(0.2, 1.6)));
  });
  const durationSeconds = round(turns.at(-1)!.end + random.float(3, 20));
  return { turns, durationSeconds };
}

function round(seconds: number): number {
  return Math.round(seconds * 10) / 10;
}
