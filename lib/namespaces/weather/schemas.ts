import Joi from 'joi';


export const weatherStatusSchema = Joi.object({
    configured: Joi.boolean().valid(false).required(),
    namespace: Joi.string().valid('/v1/weather').required().label('WeatherNamespace'),
    detail: Joi.string().required()
}).label('WeatherStatus');
